;; Strict JSON (the RFC 8259 grammar) checked on UTF-8 bytes without building anything: the part of
;; the validator's fast path that reads the bulk of a row (gym/validator/strictJson.ts loads it).
;; WebAssembly rather than JavaScript for two reasons. A long row's bytes are mostly plain string
;; content, which SIMD passes over sixteen bytes per step. And V8 compiles this once, before the
;; first line, in every thread alike, where a JavaScript scanner runs slowly until V8 has seen it
;; hot and optimized it, once per worker thread: most of a short run on a large file.
;;
;; Positions are byte offsets into the memory; a line is [at, end) and nothing at or past `end` is
;; read. Functions return the position after what they passed, or -1 when the bytes are not strict
;; JSON. Bytes of 0x80 and above are string content: the caller checks UTF-8.
(module
  ;; [0, room) holds the stack of open containers (see skip_value); lines lie past it.
  (import "strict_json" "memory" (memory 1))

  ;; Where plain string content from `at` stops: at a quote, a backslash, a control character or
  ;; the end.
  (func $plain_run (export "plain_run") (param $at i32) (param $end i32) (result i32)
    (local $block v128) (local $stops i32) (local $c i32)
    (block $tail
      (loop $blocks
        (br_if $tail (i32.gt_u (i32.add (local.get $at) (i32.const 16)) (local.get $end)))
        (local.set $block (v128.load (local.get $at)))
        (local.set $stops (i8x16.bitmask (v128.or (v128.or
          (i8x16.lt_u (local.get $block) (v128.const i8x16 32 32 32 32 32 32 32 32 32 32 32 32 32 32 32 32))
          (i8x16.eq (local.get $block) (v128.const i8x16 34 34 34 34 34 34 34 34 34 34 34 34 34 34 34 34)))
          (i8x16.eq (local.get $block) (v128.const i8x16 92 92 92 92 92 92 92 92 92 92 92 92 92 92 92 92)))))
        (if (local.get $stops) (then (return (i32.add (local.get $at) (i32.ctz (local.get $stops))))))
        (local.set $at (i32.add (local.get $at) (i32.const 16)))
        (br $blocks)))
    (block $done
      (loop $bytes
        (br_if $done (i32.ge_u (local.get $at) (local.get $end)))
        (local.set $c (i32.load8_u (local.get $at)))
        (br_if $done (i32.or (i32.lt_u (local.get $c) (i32.const 32))
          (i32.or (i32.eq (local.get $c) (i32.const 34)) (i32.eq (local.get $c) (i32.const 92)))))
        (local.set $at (i32.add (local.get $at) (i32.const 1)))
        (br $bytes)))
    (local.get $at))

  ;; JSON's four whitespace bytes: space, tab, LF, CR. Between tokens the callers call this only
  ;; when the byte at `at` could be one (32 or below): most tokens are followed by none, and a call
  ;; after each cost a tenth of a long row's scan (V8 does not inline calls within WebAssembly).
  (func $skip_whitespace (param $at i32) (param $end i32) (result i32)
    (local $c i32)
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $at) (local.get $end)))
        (local.set $c (i32.load8_u (local.get $at)))
        (br_if $done (i32.eqz (i32.or
          (i32.or (i32.eq (local.get $c) (i32.const 32)) (i32.eq (local.get $c) (i32.const 9)))
          (i32.or (i32.eq (local.get $c) (i32.const 10)) (i32.eq (local.get $c) (i32.const 13))))))
        (local.set $at (i32.add (local.get $at) (i32.const 1)))
        (br $next)))
    (local.get $at))

  (func $is_hex (param $c i32) (result i32)
    (i32.or (i32.lt_u (i32.sub (local.get $c) (i32.const 48)) (i32.const 10))
            (i32.lt_u (i32.sub (i32.or (local.get $c) (i32.const 32)) (i32.const 97)) (i32.const 6))))

  ;; `at` is just past the opening quote, or anywhere in the string before its closing quote;
  ;; returns just past the closing quote. Escapes: \uXXXX (lone surrogates too, which both
  ;; decoders accept) and \" \\ \/ \b \f \n \r \t.
  (func $skip_string (export "skip_string") (param $at i32) (param $end i32) (result i32)
    (local $c i32)
    (loop $run
      (local.set $at (call $plain_run (local.get $at) (local.get $end)))
      (if (i32.ge_u (local.get $at) (local.get $end)) (then (return (i32.const -1))))
      (local.set $c (i32.load8_u (local.get $at)))
      (if (i32.eq (local.get $c) (i32.const 34)) (then (return (i32.add (local.get $at) (i32.const 1)))))
      (if (i32.or (i32.ne (local.get $c) (i32.const 92)) (i32.ge_u (i32.add (local.get $at) (i32.const 1)) (local.get $end)))
        (then (return (i32.const -1))))
      (local.set $c (i32.load8_u offset=1 (local.get $at)))
      (if (i32.eq (local.get $c) (i32.const 117))
        (then
          (if (i32.ge_u (i32.add (local.get $at) (i32.const 5)) (local.get $end)) (then (return (i32.const -1))))
          (if (i32.eqz (i32.and
                (i32.and (call $is_hex (i32.load8_u offset=2 (local.get $at))) (call $is_hex (i32.load8_u offset=3 (local.get $at))))
                (i32.and (call $is_hex (i32.load8_u offset=4 (local.get $at))) (call $is_hex (i32.load8_u offset=5 (local.get $at))))))
            (then (return (i32.const -1))))
          (local.set $at (i32.add (local.get $at) (i32.const 6)))
          (br $run)))
      (if (i32.or
            (i32.or (i32.or (i32.eq (local.get $c) (i32.const 34)) (i32.eq (local.get $c) (i32.const 92)))
                    (i32.or (i32.eq (local.get $c) (i32.const 47)) (i32.eq (local.get $c) (i32.const 98))))
            (i32.or (i32.or (i32.eq (local.get $c) (i32.const 102)) (i32.eq (local.get $c) (i32.const 110)))
                    (i32.or (i32.eq (local.get $c) (i32.const 114)) (i32.eq (local.get $c) (i32.const 116)))))
        (then
          (local.set $at (i32.add (local.get $at) (i32.const 2)))
          (br $run))))
    (i32.const -1))

  (func $is_digit_at (param $at i32) (param $end i32) (result i32)
    (if (result i32) (i32.ge_u (local.get $at) (local.get $end))
      (then (i32.const 0))
      (else (i32.lt_u (i32.sub (i32.load8_u (local.get $at)) (i32.const 48)) (i32.const 10)))))

  (func $skip_digits (param $at i32) (param $end i32) (result i32)
    (block $done
      (loop $next
        (br_if $done (i32.eqz (call $is_digit_at (local.get $at) (local.get $end))))
        (local.set $at (i32.add (local.get $at) (i32.const 1)))
        (br $next)))
    (local.get $at))

  ;; -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
  (func $skip_number (param $at i32) (param $end i32) (result i32)
    (local $c i32)
    (if (i32.lt_u (local.get $at) (local.get $end))
      (then (if (i32.eq (i32.load8_u (local.get $at)) (i32.const 45))
        (then (local.set $at (i32.add (local.get $at) (i32.const 1)))))))
    (if (i32.ge_u (local.get $at) (local.get $end)) (then (return (i32.const -1))))
    (local.set $c (i32.load8_u (local.get $at)))
    (if (i32.eq (local.get $c) (i32.const 48))
      (then (local.set $at (i32.add (local.get $at) (i32.const 1))))
      (else
        (if (i32.ge_u (i32.sub (local.get $c) (i32.const 49)) (i32.const 9)) (then (return (i32.const -1))))
        (local.set $at (call $skip_digits (i32.add (local.get $at) (i32.const 1)) (local.get $end)))))
    (if (i32.lt_u (local.get $at) (local.get $end))
      (then (if (i32.eq (i32.load8_u (local.get $at)) (i32.const 46))
        (then
          (if (i32.eqz (call $is_digit_at (i32.add (local.get $at) (i32.const 1)) (local.get $end))) (then (return (i32.const -1))))
          (local.set $at (call $skip_digits (i32.add (local.get $at) (i32.const 1)) (local.get $end)))))))
    (if (i32.lt_u (local.get $at) (local.get $end))
      (then (if (i32.eq (i32.or (i32.load8_u (local.get $at)) (i32.const 32)) (i32.const 101))
        (then
          (local.set $at (i32.add (local.get $at) (i32.const 1)))
          (if (i32.lt_u (local.get $at) (local.get $end))
            (then
              (local.set $c (i32.load8_u (local.get $at)))
              (if (i32.or (i32.eq (local.get $c) (i32.const 43)) (i32.eq (local.get $c) (i32.const 45)))
                (then (local.set $at (i32.add (local.get $at) (i32.const 1)))))))
          (if (i32.eqz (call $is_digit_at (local.get $at) (local.get $end))) (then (return (i32.const -1))))
          (local.set $at (call $skip_digits (local.get $at) (local.get $end)))))))
    (local.get $at))

  ;; true, false, null: compared four bytes at once (little-endian "true", "null", "fals"), then the
  ;; "e" of false.
  (func $skip_literal (param $at i32) (param $end i32) (result i32)
    (local $word i32)
    (if (i32.gt_u (i32.add (local.get $at) (i32.const 4)) (local.get $end)) (then (return (i32.const -1))))
    (local.set $word (i32.load (local.get $at)))
    (if (i32.or (i32.eq (local.get $word) (i32.const 0x65757274)) (i32.eq (local.get $word) (i32.const 0x6c6c756e)))
      (then (return (i32.add (local.get $at) (i32.const 4)))))
    (if (i32.and (i32.eq (local.get $word) (i32.const 0x736c6166)) (i32.lt_u (i32.add (local.get $at) (i32.const 4)) (local.get $end)))
      (then (if (i32.eq (i32.load8_u offset=4 (local.get $at)) (i32.const 101))
        (then (return (i32.add (local.get $at) (i32.const 5)))))))
    (i32.const -1))

  ;; The key and colon of an object member at `at`; returns where its value starts.
  (func $skip_key (param $at i32) (param $end i32) (result i32)
    (if (i32.ge_u (local.get $at) (local.get $end)) (then (return (i32.const -1))))
    (if (i32.ne (i32.load8_u (local.get $at)) (i32.const 34)) (then (return (i32.const -1))))
    (local.set $at (call $skip_string (i32.add (local.get $at) (i32.const 1)) (local.get $end)))
    (if (i32.eq (local.get $at) (i32.const -1)) (then (return (i32.const -1))))
    (if (i32.lt_u (local.get $at) (local.get $end)) (then (if (i32.le_u (i32.load8_u (local.get $at)) (i32.const 32))
      (then (local.set $at (call $skip_whitespace (local.get $at) (local.get $end)))))))
    (if (i32.ge_u (local.get $at) (local.get $end)) (then (return (i32.const -1))))
    (if (i32.ne (i32.load8_u (local.get $at)) (i32.const 58)) (then (return (i32.const -1))))
    (local.set $at (i32.add (local.get $at) (i32.const 1)))
    (if (i32.lt_u (local.get $at) (local.get $end)) (then (if (i32.le_u (i32.load8_u (local.get $at)) (i32.const 32))
      (then (local.set $at (call $skip_whitespace (local.get $at) (local.get $end)))))))
    (local.get $at))

  ;; The one value starting at `at` (no whitespace before it): returns where it ends. At most `room`
  ;; containers may be open at once inside it, as the decoders' nesting limit allows. One loop with
  ;; an explicit stack (the opening byte of each open container, innermost last) rather than a call
  ;; per value: long rows are thousands of short tokens.
  (func $skip_value (export "skip_value") (param $at i32) (param $end i32) (param $room i32) (result i32)
    (local $open i32) (local $c i32) (local $container i32)
    (loop $value
      (if (i32.ge_u (local.get $at) (local.get $end)) (then (return (i32.const -1))))
      (local.set $c (i32.load8_u (local.get $at)))
      (block $ended
        (if (i32.eq (local.get $c) (i32.const 34))
          (then
            (local.set $at (call $skip_string (i32.add (local.get $at) (i32.const 1)) (local.get $end)))
            (br $ended)))
        ;; { or [ (0x7b, 0x5b); the closing byte is two past the opening one.
        (if (i32.eq (i32.or (local.get $c) (i32.const 32)) (i32.const 123))
          (then
            (if (i32.ge_u (local.get $open) (local.get $room)) (then (return (i32.const -1))))
            (local.set $at (call $skip_whitespace (i32.add (local.get $at) (i32.const 1)) (local.get $end)))
            (if (i32.lt_u (local.get $at) (local.get $end))
              (then (if (i32.eq (i32.load8_u (local.get $at)) (i32.add (local.get $c) (i32.const 2)))
                (then
                  (local.set $at (i32.add (local.get $at) (i32.const 1)))
                  (br $ended)))))
            (i32.store8 (local.get $open) (local.get $c))
            (local.set $open (i32.add (local.get $open) (i32.const 1)))
            (if (i32.eq (local.get $c) (i32.const 123))
              (then (local.set $at (call $skip_key (local.get $at) (local.get $end)))))
            (if (i32.eq (local.get $at) (i32.const -1)) (then (return (i32.const -1))))
            (br $value)))
        (if (i32.or (i32.or (i32.eq (local.get $c) (i32.const 116)) (i32.eq (local.get $c) (i32.const 102)))
                    (i32.eq (local.get $c) (i32.const 110)))
          (then
            (local.set $at (call $skip_literal (local.get $at) (local.get $end)))
            (br $ended)))
        (local.set $at (call $skip_number (local.get $at) (local.get $end))))
      ;; A value ended at `at`: close what it ends, or move on to the next member or element.
      (loop $close
        (if (i32.eq (local.get $at) (i32.const -1)) (then (return (i32.const -1))))
        (if (i32.eqz (local.get $open)) (then (return (local.get $at))))
        (if (i32.lt_u (local.get $at) (local.get $end)) (then (if (i32.le_u (i32.load8_u (local.get $at)) (i32.const 32))
          (then (local.set $at (call $skip_whitespace (local.get $at) (local.get $end)))))))
        (if (i32.ge_u (local.get $at) (local.get $end)) (then (return (i32.const -1))))
        (local.set $c (i32.load8_u (local.get $at)))
        (local.set $container (i32.load8_u (i32.sub (local.get $open) (i32.const 1))))
        (if (i32.eq (local.get $c) (i32.const 44))
          (then
            (local.set $at (i32.add (local.get $at) (i32.const 1)))
            (if (i32.lt_u (local.get $at) (local.get $end)) (then (if (i32.le_u (i32.load8_u (local.get $at)) (i32.const 32))
              (then (local.set $at (call $skip_whitespace (local.get $at) (local.get $end)))))))
            (if (i32.eq (local.get $container) (i32.const 123))
              (then (local.set $at (call $skip_key (local.get $at) (local.get $end)))))
            (if (i32.eq (local.get $at) (i32.const -1)) (then (return (i32.const -1))))
            (br $value)))
        (if (i32.ne (local.get $c) (i32.add (local.get $container) (i32.const 2))) (then (return (i32.const -1))))
        (local.set $open (i32.sub (local.get $open) (i32.const 1)))
        (local.set $at (i32.add (local.get $at) (i32.const 1)))
        (br $close)))
    (i32.const -1)))

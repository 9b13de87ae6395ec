#!/usr/bin/env node
// Assembles one WebAssembly text file (argv[2]) and writes the binary to stdout, for
// cachedBundle.js's wasmFromWat(), which runs it in a child process once per change of the file:
// wabt (the WebAssembly Binary Toolkit's wat2wasm) only loads asynchronously, and what needs the
// binary loads synchronously.
'use strict';
const fs = require('node:fs');

const file = process.argv[2];
require('wabt')().then((wabt) => {
  const module = wabt.parseWat(file, fs.readFileSync(file, 'utf8'), { simd: true });
  try {
    module.validate();
    process.stdout.write(Buffer.from(module.toBinary({}).buffer));
  } finally {
    module.destroy();
  }
});

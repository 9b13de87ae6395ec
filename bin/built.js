// Where `npm run build` (scripts/build.ts) puts what the project runs, and whether it is current.
// Nothing of ours is compiled at run time: the CLI, the workflow bundle, the validator's bundles and
// its WebAssembly are made once by the build. A checkout edited since its last build is refused with
// the command that fixes it, rather than run on code that no longer matches its sources.
//
// Plain JavaScript: bin/pivot-miner.js reads it before anything compiled is loaded.
'use strict';
const fs = require('node:fs');
const path = require('node:path');

const repoRoot = path.resolve(__dirname, '..');
const distDir = path.join(repoRoot, 'dist');
const STAMP_FILE = path.join(distDir, 'build-stamp.json');

/** Directories whose files the build reads; test/ is not built. */
const SOURCE_DIRS = ['activities', 'bin', 'client', 'contracts', 'gym', 'scripts', 'servers', 'workers', 'workflows'];
const SOURCE_FILES = ['package-lock.json', 'tsconfig.json'];
/** An installed package ships dist/ without the sources it was built from (package.json "files"),
 * so it has nothing to be stale against; a checkout always has its tsconfig.json. */
const isCheckout = fs.existsSync(path.join(repoRoot, 'tsconfig.json'));
const BUILT_FROM = /\.(ts|wat|js)$/;

function listSources(dir, out) {
  let entries;
  try {
    entries = fs.readdirSync(path.join(repoRoot, dir), { withFileTypes: true });
  } catch {
    return out;
  }
  for (const entry of entries) {
    const rel = path.join(dir, entry.name);
    if (entry.isDirectory()) listSources(rel, out);
    else if (BUILT_FROM.test(entry.name)) out.push(rel);
  }
  return out;
}

/** Every source the build reads, with its size and modification time: a few hundred stat calls,
 * cheap next to loading the CLI, and it cannot miss an edit, an added file or a removed one. */
function sourceStamp() {
  const files = SOURCE_DIRS.flatMap((dir) => listSources(dir, []))
    .concat(SOURCE_FILES)
    .sort();
  const stamp = {};
  for (const file of files) {
    try {
      const stat = fs.statSync(path.join(repoRoot, file));
      stamp[file] = `${stat.size}:${Math.trunc(stat.mtimeMs)}`;
    } catch {
      // A listed file removed since the listing: left out, as it would be from a fresh listing.
    }
  }
  return stamp;
}

/** The first difference between the stamp the build recorded and the checkout now, or undefined. */
function staleness() {
  let recorded;
  try {
    recorded = JSON.parse(fs.readFileSync(STAMP_FILE, 'utf8'));
  } catch {
    return 'dist/ has not been built';
  }
  if (!isCheckout) return undefined;
  const now = sourceStamp();
  for (const file of Object.keys(now)) {
    if (recorded[file] === undefined) return `${file} was added since the last build`;
    if (recorded[file] !== now[file]) return `${file} changed since the last build`;
  }
  for (const file of Object.keys(recorded))
    if (now[file] === undefined) return `${file} was removed since the last build`;
  return undefined;
}

/** Throws, naming the first difference and the fix, unless dist/ was built from this checkout. */
function assertBuilt() {
  const why = staleness();
  if (why !== undefined) throw new Error(`pivot-miner: ${why}; run \`npm run build\` in ${repoRoot}`);
}

/** The absolute path of a file the build wrote, e.g. built('cli.js'). */
const built = (name) => path.join(distDir, name);

module.exports = { repoRoot, distDir, STAMP_FILE, sourceStamp, staleness, assertBuilt, built };

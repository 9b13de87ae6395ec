import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';

// The layering docs/architecture.md describes, checked on every import, export … from, require(),
// require.resolve() and import() of every source file: gym/ ← contracts/ ← servers/ ← activities/ ←
// workflows/ ← client/, workers/, scripts/, bin/. A module imports from its own layer or a lower one;
// the top layer's folders may use each other. servers/ sits below activities/, which starts them.

const root = path.resolve(__dirname, '../..');
/** Each source folder's layer, lowest first. */
const LAYER_OF: Record<string, number> = {
  gym: 0,
  contracts: 1,
  servers: 2,
  activities: 3,
  workflows: 4,
  client: 5,
  workers: 5,
  scripts: 5,
  bin: 5,
};
/** Top-level folders that hold no source of the layers: the tests themselves and generated output. */
const NOT_SOURCE = new Set(['test', 'node_modules', 'dist', 'artifacts', '.state', '.git']);
/** Node modules the pure core must not reach: it spawns nothing and compiles nothing. */
const PURE_FORBIDDEN = ['node:child_process', 'child_process', 'node:vm', 'vm'];
const PURE_LAYERS = ['gym', 'contracts'];
const SOURCE = /\.(ts|js|cjs|mjs)$/;

function sourceFiles(dir: string): string[] {
  return readdirSync(path.join(root, dir), { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sourceFiles(path.join(dir, e.name)) : SOURCE.test(e.name) ? [path.join(dir, e.name)] : [],
  );
}

/** Every module specifier in `text`: imports, side-effect imports, re-exports, require(), require.resolve(), import(). */
export function specifiers(text: string): string[] {
  const pattern = /(?:\bfrom\s*|\bimport\s*|\brequire\(\s*|\brequire\.resolve\(\s*|\bimport\(\s*)(['"])([^'"\n]+)\1/g;
  return [...text.matchAll(pattern)].map((m) => m[2]!);
}

/** What `file` (relative to the root) imports against the layer order: one line per violation. */
export function violations(file: string, text: string): string[] {
  const layer = file.split(path.sep)[0]!;
  const rank = LAYER_OF[layer];
  if (rank === undefined) return [`${file} is in ${layer}/, which has no layer`];
  const found: string[] = [];
  const pure = PURE_LAYERS.includes(layer);
  for (const spec of specifiers(text)) {
    if (spec.startsWith('.')) {
      const target = path.relative(root, path.resolve(root, path.dirname(file), spec));
      const targetRank = LAYER_OF[target.split(path.sep)[0]!];
      if (targetRank === undefined) found.push(`${file} imports ${target}, outside every layer`);
      else if (targetRank > rank) found.push(`${file} imports ${target}, a higher layer`);
    } else if (pure && PURE_FORBIDDEN.includes(spec)) {
      found.push(`${file} imports ${spec}`);
    }
  }
  // A path computed at run time hides where it leads (the validator once found the launcher that way).
  if (pure && /\brequire\(\s*[^'"\s)]/.test(text)) found.push(`${file} requires a computed path`);
  return found;
}

test('every top-level folder with source has a layer', () => {
  const folders = readdirSync(root, { withFileTypes: true })
    .filter((e) => e.isDirectory() && !NOT_SOURCE.has(e.name) && sourceFiles(e.name).length > 0)
    .map((e) => e.name)
    .sort();
  assert.deepEqual(folders, Object.keys(LAYER_OF).sort());
});

for (const [layer, rank] of Object.entries(LAYER_OF)) {
  const below = Object.keys(LAYER_OF).filter((other) => LAYER_OF[other]! <= rank);
  test(`${layer}/ imports only from ${below.join(', ')} (and packages)`, () => {
    const files = sourceFiles(layer);
    assert.ok(files.length > 0, `${layer}/ has no source files`);
    const found = files.flatMap((file) => violations(file, readFileSync(path.join(root, file), 'utf8')));
    assert.deepEqual(found, []);
  });
}

test('the check sees a lower layer reaching up through import, export, require() or import()', () => {
  const gymFile = path.join('gym', 'validator', 'probe.ts');
  assert.deepEqual(violations(gymFile, "import { built } from '../../bin/built';"), [
    `${gymFile} imports bin/built, a higher layer`,
  ]);
  assert.deepEqual(violations(gymFile, "const b = require('../../bin/built.js');"), [
    `${gymFile} imports bin/built.js, a higher layer`,
  ]);
  assert.deepEqual(violations(gymFile, "await import('../../scripts/build');"), [
    `${gymFile} imports scripts/build, a higher layer`,
  ]);
  assert.deepEqual(violations(gymFile, "import { spawn } from 'node:child_process';"), [
    `${gymFile} imports node:child_process`,
  ]);
  assert.deepEqual(violations(gymFile, "const b = require(path.join(root, 'bin', 'built.js'));"), [
    `${gymFile} requires a computed path`,
  ]);
  const serversFile = path.join('servers', 'probe.ts');
  assert.deepEqual(violations(serversFile, "export { createActivities } from '../activities';"), [
    `${serversFile} imports activities, a higher layer`,
  ]);
  assert.deepEqual(violations(serversFile, "import '../workers/runtime';"), [
    `${serversFile} imports workers/runtime, a higher layer`,
  ]);
  const workflowFile = path.join('workflows', 'probe.ts');
  assert.deepEqual(violations(workflowFile, "import { client } from '../client/pivotMining';"), [
    `${workflowFile} imports client/pivotMining, a higher layer`,
  ]);
  assert.deepEqual(violations(workflowFile, "import { helper } from '../test/helpers/ctx';"), [
    `${workflowFile} imports test/helpers/ctx, outside every layer`,
  ]);
});

test('the check lets a layer use its own, lower layers and packages, and the top layer its peers', () => {
  assert.deepEqual(
    violations(
      path.join('gym', 'validator', 'probe.ts'),
      "import { readFileSync } from 'node:fs';\nimport { x } from '../kindedJson';",
    ),
    [],
  );
  assert.deepEqual(
    violations(path.join('activities', 'probe.ts'), "import { a } from '../servers/x';\nimport { b } from '../gym/y';"),
    [],
  );
  assert.deepEqual(
    violations(
      path.join('scripts', 'probe.ts'),
      "import { a } from '../bin/built';\nimport { b } from '../workers/c';\nimport { d } from '../client/e';",
    ),
    [],
  );
});

// Inside activities/, the folders stand in an order of their own, lowest first: a file imports from
// its own folder or a lower one, never a peer, so a stage's files (early/, pool/) stay out of the
// code every chunk runs. index.ts, which registers them all, is above every folder.
const ACTIVITY_FOLDER_RANK: Record<string, number> = { http: 0, run: 1, chunk: 2, pool: 2, stage: 3, early: 4 };

/** What `file` (under activities/) imports against the folder order: one line per violation. */
export function activityFolderViolations(file: string, text: string): string[] {
  const [, folder] = file.split(path.sep);
  const rank = ACTIVITY_FOLDER_RANK[folder!];
  if (rank === undefined) return folder === 'index.ts' ? [] : [`${file} is in activities/${folder}, which has no rank`];
  const found: string[] = [];
  for (const spec of specifiers(text).filter((s) => s.startsWith('.'))) {
    const target = path.relative(root, path.resolve(root, path.dirname(file), spec)).split(path.sep);
    if (target[0] !== 'activities' || target[1] === folder) continue;
    const targetRank = ACTIVITY_FOLDER_RANK[target[1]!];
    if (targetRank === undefined || targetRank >= rank) found.push(`${file} imports ${target.join('/')}`);
  }
  return found;
}

test('every activities/ folder imports only from itself and lower folders', () => {
  const files = sourceFiles('activities');
  const folders = new Set(files.map((f) => f.split(path.sep)[1]!).filter((f) => !f.endsWith('.ts')));
  assert.deepEqual([...folders].sort(), Object.keys(ACTIVITY_FOLDER_RANK).sort());
  const found = files.flatMap((file) => activityFolderViolations(file, readFileSync(path.join(root, file), 'utf8')));
  assert.deepEqual(found, []);
});

test('the folder check sees a chunk reading early profiling, a peer, and an unranked folder', () => {
  const chunkFile = path.join('activities', 'chunk', 'probe.ts');
  assert.deepEqual(activityFolderViolations(chunkFile, "import { a } from '../early/prefetched';"), [
    `${chunkFile} imports activities/early/prefetched`,
  ]);
  assert.deepEqual(activityFolderViolations(chunkFile, "import { a } from '../pool/pool';"), [
    `${chunkFile} imports activities/pool/pool`,
  ]);
  assert.deepEqual(
    activityFolderViolations(chunkFile, "import { a } from '../run/fence';\nimport { b } from './fenceShards';"),
    [],
  );
  const strayFile = path.join('activities', 'misc', 'probe.ts');
  assert.deepEqual(activityFolderViolations(strayFile, ''), [`${strayFile} is in activities/misc, which has no rank`]);
});

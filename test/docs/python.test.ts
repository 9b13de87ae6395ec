import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import ts from 'typescript';

// docs/python.md shows the scripts of examples/python/, which test/examples/ runs against a real
// worker; the doc's copies must be those files byte for byte, so what a reader copies is what ran.
// Its tables of result and progress keys must list exactly the keys of the TypeScript types the
// workflows return, so a key added to contracts/ without the doc fails here.

const repoRoot = path.resolve(__dirname, '../..');
const doc = readFileSync(path.join(repoRoot, 'docs/python.md'), 'utf8');

test("docs/python.md's python blocks are examples/python/start_pivot_mining.py and pivot_curriculum.py", () => {
  const blocks = [...doc.matchAll(/```python\n([\s\S]*?)```\n/g)].map((match) => match[1]);
  const examples = ['start_pivot_mining.py', 'pivot_curriculum.py'].map((name) =>
    readFileSync(path.join(repoRoot, 'examples/python', name), 'utf8'),
  );
  assert.deepEqual(blocks, examples);
});

/** The property names of contracts' `TypeName`, or of its property `TypeName.key` (optional or not). */
function contractKeys(checker: ts.TypeChecker, modules: ts.SourceFile[], typePath: string): string[] {
  const [typeName, ...properties] = typePath.split('.');
  const declaration = modules
    .flatMap((file) => file.statements)
    .find(
      (node) => (ts.isInterfaceDeclaration(node) || ts.isTypeAliasDeclaration(node)) && node.name.text === typeName,
    );
  assert.ok(declaration, `${typeName} is not declared in contracts/ or gym/`);
  let type = checker.getTypeAtLocation(declaration);
  for (const property of properties) {
    const symbol = type.getProperty(property);
    assert.ok(symbol, `${typeName} has no ${property}`);
    type = checker.getNonNullableType(checker.getTypeOfSymbolAtLocation(symbol, declaration));
  }
  return type
    .getProperties()
    .map((symbol) => symbol.name)
    .sort();
}

/** `TypeName` (or `TypeName.key` when the row names an object key) → the keys its row lists. */
function documentedKeys(): Map<string, string[]> {
  const rows = new Map<string, string[]>();
  let parent = '';
  for (const line of doc.split('\n')) {
    const cells = /^\| (.+?)\s+\| (`.+?`)\s*\|$/.exec(line);
    if (!cells) continue;
    const keys = [...cells[2]!.matchAll(/`([^`]+)`/g)].map((match) => match[1]!).sort();
    const typeName = /: `([A-Z]\w+)`/.exec(cells[1]!)?.[1];
    const ofKey = /^its `(\w+)`/.exec(cells[1]!)?.[1];
    if (typeName) parent = typeName;
    rows.set(typeName ?? `${parent}.${ofKey}`, keys);
  }
  return rows;
}

test("docs/python.md's key tables list every key of the types the workflows return, and no other", () => {
  const files = ['contracts/payloads.ts', 'contracts/poolPayloads.ts', 'gym/rolloutAccounting.ts'].map((file) =>
    path.join(repoRoot, file),
  );
  const program = ts.createProgram(files, { strict: true, noEmit: true, skipLibCheck: true });
  const checker = program.getTypeChecker();
  const modules = files.map((file) => program.getSourceFile(file)!);
  const rows = documentedKeys();
  assert.deepEqual([...rows.keys()].sort(), [
    'CurriculumRound',
    'PivotMiningProgress',
    'PivotMiningResult',
    'PivotMiningResult.prefetch',
    'PrefetchProgress',
    'RolloutAccounting',
    'StageProgress',
  ]);
  for (const [typePath, keys] of rows) assert.deepEqual(keys, contractKeys(checker, modules, typePath), typePath);
});

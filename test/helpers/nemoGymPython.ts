import { execFile, execFileSync } from 'node:child_process';
import path from 'node:path';

// NeMo Gym's own Python (the pinned venv scripts/ensure-nemo-gym.sh installs), for tests that
// compare against what its code computes or writes.

const repoRoot = path.resolve(__dirname, '../..');

/** Runs `script` in NeMo Gym's venv with `stdin` as its input and resolves to what it prints. */
export function runNemoGymPython(script: string, stdin: string): Promise<string> {
  const binDir = execFileSync('bash', [path.join(repoRoot, 'scripts/ensure-nemo-gym.sh')], { encoding: 'utf8' })
    .trim()
    .split('\n')
    .at(-1)!;
  return new Promise<string>((resolve, reject) => {
    const child = execFile(
      path.join(binDir, 'python'),
      ['-c', script],
      { maxBuffer: 1 << 24 },
      (err, stdout, stderr) => (err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(stdout)),
    );
    child.stdin!.end(stdin);
  });
}

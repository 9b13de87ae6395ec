import { execFile, execFileSync } from 'node:child_process';
import path from 'node:path';
import { runNemoGymCommand, type NemoGymInstall } from '../../scripts/lib/nemoGym';

// NeMo Gym's own Python (the pinned venv scripts/ensure-nemo-gym.sh installs), for tests that
// compare against what its code computes or writes.

const repoRoot = path.resolve(__dirname, '../..');

/** Runs `script` in NeMo Gym's venv (0.4.0 unless told) with `stdin` as its input and resolves to what it prints. */
export function runNemoGymPython(script: string, stdin: string, version = '0.4.0'): Promise<string> {
  const ensure = path.join(repoRoot, 'scripts/ensure-nemo-gym.sh');
  const binDir = execFileSync('bash', [ensure, version], { encoding: 'utf8' }).trim().split('\n').at(-1)!;
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

/** NeMo Gym's `ng_prepare_data` in train preparation on one Gym config: `<outDir>/train.jsonl`, `validation.jsonl`. */
export function prepareTrainData(
  install: NemoGymInstall,
  gymConfigPath: string,
  outDir: string,
  cwd: string,
): Promise<{ code: number | null; output: string }> {
  return runNemoGymCommand(
    install,
    'ng_prepare_data',
    [
      `+config_paths=[${gymConfigPath}]`,
      `+output_dirpath=${outDir}`,
      '+mode=train_preparation',
      '+should_download=false',
    ],
    cwd,
  );
}

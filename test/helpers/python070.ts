import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { ensureNemoGym } from '../../scripts/lib/nemoGym';

/** What a Python snippet prints, run by NeMo Gym 0.7.0's interpreter (numpy, scipy, nemo_gym). */
export function python070(code: string): string {
  const { binDir, env } = ensureNemoGym('0.7.0');
  return execFileSync(path.join(binDir, 'python'), ['-c', code], { encoding: 'utf8', env });
}

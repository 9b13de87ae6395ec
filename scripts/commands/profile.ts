import { access } from 'node:fs/promises';
import type { Command } from 'commander';
import { formatProfileSummary, writeRewardProfile } from '../../gym/rewardProfile';

interface ProfileFlags {
  materializedInputs: string;
  rollouts: string;
  allowPartialRollouts?: boolean;
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
    .action(async (flags: ProfileFlags) => {
      await mustExist(flags.materializedInputs, '--materialized-inputs');
      await mustExist(flags.rollouts, '--rollouts');
      const outputs = await writeRewardProfile({
        materializedInputsPath: flags.materializedInputs,
        rolloutsPath: flags.rollouts,
        allowPartialRollouts: flags.allowPartialRollouts ?? false,
      });
      console.log(formatProfileSummary(outputs));
    });
}

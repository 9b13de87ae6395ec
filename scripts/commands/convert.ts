import type { Command } from 'commander';
import { type ConvertCounts, type ConvertOptions, convertToCandidates } from '../../gym/convert';

interface ConvertFlags {
  input: string[];
  sourceFormat: string;
  agentName: string;
  outDir: string;
  minSourceReward?: string;
  rewardProfile?: string;
  sourcePreference: string;
  batchPivots?: boolean;
  keepReasoning?: boolean;
}

/** `pivot-miner convert`: trajectories → pivot candidates, on its own (no Temporal). */
export function registerConvertCommand(program: Command): void {
  program
    .command('convert')
    .description(
      'Convert trajectories (NeMo Gym rollouts, Chat Completions, conversational traces) into pivot candidates',
    )
    .requiredOption('--input <files...>', 'trajectory JSONL files')
    .option(
      '--source-format <format>',
      'auto | gym_rollouts | chat_completions | conversational | tool_messages',
      'auto',
    )
    .requiredOption('--agent-name <name>', 'agent_ref.name of every candidate row')
    .requiredOption(
      '--out-dir <dir>',
      'where candidates.jsonl, candidates_skipped.jsonl and candidates_metrics.json go',
    )
    .option('--min-source-reward <reward>', 'minimum reward of a source trajectory (default 1.0)')
    .option('--reward-profile <file>', '*_reward_profiling.jsonl of the source rollouts')
    .option('--source-preference <preference>', 'prefer_mixed | require_mixed | off', 'prefer_mixed')
    .option('--batch-pivots', 'turn several-call turns into function_call_batch pivots instead of skipping them')
    .option('--keep-reasoning', 'keep earlier reasoning items in the input (only for targets that accept them)')
    .action(async (flags: ConvertFlags) => {
      let minSourceReward: number | undefined;
      if (flags.minSourceReward !== undefined) {
        minSourceReward = Number(flags.minSourceReward);
        if (flags.minSourceReward.trim() === '' || !Number.isFinite(minSourceReward)) {
          throw new Error(`--min-source-reward must be a number, got ${JSON.stringify(flags.minSourceReward)}`);
        }
      }
      const summary = await convertToCandidates({
        inputs: flags.input,
        outDir: flags.outDir,
        rewardProfilePath: flags.rewardProfile,
        agent_name: flags.agentName,
        // The library validates both against its option schema and names the allowed values.
        source_format: flags.sourceFormat as ConvertOptions['source_format'],
        source_preference: flags.sourcePreference as ConvertOptions['source_preference'],
        min_source_reward: minSourceReward,
        batch_pivots: flags.batchPivots ?? false,
        keep_reasoning: flags.keepReasoning ?? false,
      });
      console.log(formatCounts(summary.counts));
      console.log(`candidates: ${summary.candidatesPath}`);
      console.log(`skip audit: ${summary.skippedPath}`);
      console.log(`metrics:    ${summary.metricsPath}`);
    });
}

export function formatCounts(counts: ConvertCounts): string {
  const nonZero = (record: Record<string, number>) =>
    Object.entries(record)
      .filter(([, n]) => n > 0)
      .map(([k, n]) => `${k}=${n}`)
      .join(', ') || 'none';
  return [
    `trajectories read:      ${counts.trajectories}`,
    `positive trajectories:  ${counts.positive_trajectories}`,
    ...(counts.not_selected_trajectories > 0 ? [`not selected (mixed):   ${counts.not_selected_trajectories}`] : []),
    `decision points:        ${counts.decision_points}`,
    `candidates:             ${counts.candidates} (${nonZero(counts.by_action_type)})`,
    `skipped:                ${counts.skipped} (${nonZero(counts.by_skip_reason)})`,
    `deduped:                ${counts.deduped}`,
  ].join('\n');
}

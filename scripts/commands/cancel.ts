import type { Command } from 'commander';
import { cancelWorkflow, connectClient } from '../../client';

export function registerCancelCommand(program: Command): void {
  program
    .command('cancel')
    .description(
      'cancel a pivot mining run: in-flight chunks stop cleanly and their shards stay, so re-running with the same --run-id resumes',
    )
    .argument('<workflow-id>')
    .action(async (workflowId: string) => {
      const { client, close } = await connectClient();
      try {
        if ((await cancelWorkflow(client, workflowId)) === 'finished')
          console.log(`${workflowId} finished before the cancellation took effect`);
        else console.log(`${workflowId} cancelled; re-run with the same --run-id to resume from its shards`);
      } finally {
        await close();
      }
    });
}

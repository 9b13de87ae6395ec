import { TestWorkflowEnvironment } from '@temporalio/testing';
import { temporalBinary } from '../../scripts/lib/temporalCli';

/** A real Temporal dev server for tests, from the binary we build (nothing is downloaded). */
export async function startTestTemporal(): Promise<TestWorkflowEnvironment> {
  return TestWorkflowEnvironment.createLocal({
    server: { executable: { type: 'existing-path', path: temporalBinary() }, extraArgs: ['--log-level', 'error'] },
  });
}

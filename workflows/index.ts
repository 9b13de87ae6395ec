// The worker bundles this file: one exported workflow per concern.
export { pivotMiningWorkflow, progressQuery } from './pivotMining';
export { collectRolloutsWorkflow, stageProgressQuery } from './collectRollouts';
export { nightlyMiningWorkflow, nightlyProgressQuery } from './nightlyMining';
export { pivotCurriculumWorkflow, policyCheckpointUpdate, roundsQuery } from './curriculum';

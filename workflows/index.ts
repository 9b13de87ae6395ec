// The worker bundles this file: one exported workflow per concern.
export { pivotMiningWorkflow } from './pivotMining';
export { collectRolloutsWorkflow } from './collectRollouts';
export { prefetchLocalProfileWorkflow } from './prefetchLocalProfile';
export { earlySegmentWorkflow } from './earlySegment';
export { nightlyMiningWorkflow } from './nightlyMining';
export { pivotCurriculumWorkflow } from './curriculum';

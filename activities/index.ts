// Everything the worker registers. Activities are the IO shell around gym/: one file per stage.
export { prepareRun } from './prepare';
export { ensureServers } from './servers';
export { runManagedServers, workerHostQueue } from './spawn';
export { materializeStage } from './materialize';
export { runChunk } from './chunk';
export { mergeShards } from './merge';
export { profileStage } from './profile';
export { convertStage } from './convert';
export { publishStage } from './publish';
export { prepareNightlyRun, convertNewSources, publishNightlyVersion } from './nightly';
export { startCurriculum, prepareCurriculumRound, publishCurriculumRound } from './curriculum';

import path from 'node:path';

/** The NeMo Gym reference data the tests read (test/fixtures/README.md says where each file comes from). */
export const fixturesDir = path.resolve(__dirname, '../fixtures');

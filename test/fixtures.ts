import path from 'node:path';

/** NeMo Gym reference data shared by all helpers (see its README files). */
export const fixturesDir = path.resolve(__dirname, '../../shared/fixtures');

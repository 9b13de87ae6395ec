import table from './studentT975.json';

// The 95% t-interval NeMo Gym 0.7.0 puts around repeat-level means (scipy's `stats.t.interval`):
// `loc ± t * scale`, t being Student's t 0.975 quantile. Up to 1000 degrees of freedom t is scipy's
// own value (scripts/python-float-tables.sh), so intervals agree to the last bit; beyond, a Cornish-Fisher
// expansion, within an ulp or two of scipy's (so a last digit may differ).

const QUANTILES: readonly number[] = table;

/** The normal quantile at scipy's lower tail probability `(1 - 0.95) / 2`, negated. */
const Z = 1.959963984540054;

/** Abramowitz & Stegun 26.7.5: t from the normal quantile in powers of 1/df. */
function cornishFisher(df: number): number {
  const z2 = Z * Z;
  const g1 = (Z * (z2 + 1)) / 4;
  const g2 = (Z * ((5 * z2 + 16) * z2 + 3)) / 96;
  const g3 = (Z * (((3 * z2 + 19) * z2 + 17) * z2 - 15)) / 384;
  const g4 = (Z * ((((79 * z2 + 776) * z2 + 1482) * z2 - 1920) * z2 - 945)) / 92160;
  return Z + (g1 + (g2 + (g3 + g4 / df) / df) / df) / df;
}

export function studentT975(df: number): number {
  return QUANTILES[df - 1] ?? cornishFisher(df);
}

/** scipy's `stats.t.interval(0.95, df=n - 1, loc=mean, scale=se)` (n > 1, se > 0). */
export function tInterval95(mean: number, se: number, n: number): [number, number] {
  const t = studentT975(n - 1);
  return [-t * se + mean, t * se + mean];
}

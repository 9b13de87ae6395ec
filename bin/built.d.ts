// Types of bin/built.js, which stays plain JavaScript because bin/pivot-miner.js reads it first.

export const repoRoot: string;
export const distDir: string;
export const STAMP_FILE: string;
/** Size and modification time of every source the build reads, by path from the checkout root. */
export function sourceStamp(): Record<string, string>;
/** The first difference between the recorded build and the checkout, or undefined when current. */
export function staleness(): string | undefined;
/** Throws, naming the first difference and `npm run build`, unless dist/ matches the checkout. */
export function assertBuilt(): void;
/** The absolute path of a file the build wrote, e.g. built('cli.js'). */
export function built(name: string): string;

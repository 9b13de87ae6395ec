// Types of bin/cachedBundle.js, which stays plain JavaScript because it runs before any TypeScript loader.

/** A file node can load for `entry` (relative to the checkout root): its bundle, or else its source. */
export function loadableFile(entry: string): string;

/** Loads `entry` from its bundle, or through tsx where the bundle cannot be made. */
export function requireBundled(entry: string): unknown;

/** The WebAssembly binary of `entry`, a WebAssembly text file relative to the checkout root. */
export function wasmFromWat(entry: string): Buffer;

import { readFileSync } from 'node:fs';
import { z } from 'zod';

// A V8 CPU profile as cpuProfile.cjs writes it (the inspector's `Profiler.Profile`): the parts the
// per-function summary (cpuProfileSummary.ts) and the peer bench's per-module one (peerProfile.ts) read.

export const cpuProfileSchema = z.object({
  nodes: z.array(
    z.object({
      id: z.number(),
      callFrame: z.object({ functionName: z.string(), url: z.string(), lineNumber: z.number() }),
      children: z.array(z.number()).optional(),
    }),
  ),
  samples: z.array(z.number()),
  timeDeltas: z.array(z.number()),
});
export type CpuProfile = z.infer<typeof cpuProfileSchema>;

/** Reads one profile file; a file that is not JSON or not a profile fails naming the file and why. */
export function readCpuProfile(file: string): CpuProfile {
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new Error(`${file}: not JSON (${error instanceof Error ? error.message : String(error)})`, {
      cause: error,
    });
  }
  const parsed = cpuProfileSchema.safeParse(json);
  if (!parsed.success) throw new Error(`${file}: not a V8 CPU profile (${z.prettifyError(parsed.error)})`);
  return parsed.data;
}

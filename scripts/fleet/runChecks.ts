import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import type { Client } from '@temporalio/client';
import { listFiles } from '../chaos/compare';

// What a disturbed run is judged by besides its artifacts (compared as the chaos harness compares
// them): files changed after the workflow completed, the lines retried attempts left, and the
// activity attempts Temporal retried.

/** Size and mtime of every file: what "nothing changed" is checked against. */
export function snapshot(dir: string): Map<string, string> {
  const files = new Map<string, string>();
  for (const rel of listFiles(dir)) {
    const st = statSync(path.join(dir, rel));
    files.set(rel, `${st.size}:${st.mtimeMs}`);
  }
  return files;
}

export function changedFiles(before: Map<string, string>, after: Map<string, string>): string[] {
  const changed = [...after].filter(([rel, v]) => before.get(rel) !== v).map(([rel]) => rel);
  return [...changed, ...[...before.keys()].filter((rel) => !after.has(rel)).map((rel) => `${rel} (removed)`)];
}

/**
 * Lines some attempt wrote and a later one superseded or retried: the failures sidecars (one line
 * per failed request attempt, with its class) and any fencing sidecar the chunk and merge steps
 * keep. A fault-free reference has none, so every line here comes from a fault; a line is explained
 * when its class is one a cut-off or killed host produces.
 */
export function retriedLines(runDir: string): { byFile: Record<string, number>; unexplained: number } {
  const byFile: Record<string, number> = {};
  let unexplained = 0;
  const explained = new Set(['timeout', 'connection', 'http_5xx']);
  for (const rel of listFiles(runDir)) {
    const base = path.basename(rel);
    const isFailures = base.endsWith('_failures.jsonl') && !rel.includes('_shards/');
    const isFence = /fenc|supersed|retried/i.test(base);
    if (!isFailures && !isFence) continue;
    const lines = readFileSync(path.join(runDir, rel), 'utf8')
      .split('\n')
      .filter((l) => l.trim() !== '');
    byFile[rel] = lines.length;
    if (isFailures) {
      for (const line of lines) {
        const cls = (JSON.parse(line) as { failure_class?: string }).failure_class ?? '';
        if (!explained.has(cls)) unexplained++;
      }
    }
  }
  return { byFile, unexplained };
}

/** The segments local profiling ran early beside collect (`overlap: true`), from its workflow's history. */
async function earlySegments(client: Client, workflowId: string): Promise<string[]> {
  const history = await client.workflow
    .getHandle(`${workflowId}/prefetch`)
    .fetchHistory()
    .catch(() => undefined);
  return (history?.events ?? []).flatMap((e) => {
    const id = e.childWorkflowExecutionStartedEventAttributes?.workflowExecution?.workflowId;
    return id ? [id] : [];
  });
}

/** Attempts > 1 of each activity type in the stage workflows' histories (their first runs), early segments counted as local profiling. */
export async function retriedActivities(client: Client, workflowId: string): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  const workflows: Array<[string, string]> = [
    ['collect', `${workflowId}/collect`],
    ['local_profile', `${workflowId}/local_profile`],
    ...(await earlySegments(client, workflowId)).map((id): [string, string] => ['local_profile', id]),
  ];
  for (const [stage, id] of workflows) {
    const history = await client.workflow.getHandle(id).fetchHistory();
    const typeOf = new Map<string, string>();
    for (const e of history.events ?? []) {
      const scheduled = e.activityTaskScheduledEventAttributes;
      if (scheduled) typeOf.set(String(e.eventId), scheduled.activityType?.name ?? '?');
      const started = e.activityTaskStartedEventAttributes;
      if (started && (started.attempt ?? 1) > 1) {
        const key = `${stage}/${typeOf.get(String(started.scheduledEventId)) ?? '?'}`;
        out[key] = (out[key] ?? 0) + 1;
      }
    }
  }
  return out;
}

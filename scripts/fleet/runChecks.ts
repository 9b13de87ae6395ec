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

/**
 * Attempts > 1 of each activity type in the stage workflows' histories (their first runs), early
 * segments counted as local profiling, and early profiling's own steps (its filing passes) as early.
 */
export async function retriedActivities(client: Client, workflowId: string): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  const workflows: Array<[string, string]> = [
    ['collect', `${workflowId}/collect`],
    ['local_profile', `${workflowId}/local_profile`],
    ...(await earlySegments(client, workflowId)).map((id): [string, string] => ['local_profile', id]),
    ['early', `${workflowId}/prefetch`],
  ];
  for (const [stage, id] of workflows) {
    // A run without early profiling (`overlap: false`) has no early workflow.
    const history = await client.workflow
      .getHandle(id)
      .fetchHistory()
      .catch((err: unknown) => {
        if (stage === 'early') return undefined;
        throw err;
      });
    if (!history) continue;
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

/** Seconds from the last attempt's start to the completion of each activity of `types` a workflow ran (its latest run). */
export async function activitySeconds(
  client: Client,
  workflowId: string,
  types: ReadonlySet<string>,
): Promise<Array<[string, number]>> {
  const history = await client.workflow
    .getHandle(workflowId)
    .fetchHistory()
    .catch(() => undefined);
  const typeOf = new Map<string, string>();
  const startedAt = new Map<string, number>();
  const out: Array<[string, number]> = [];
  const ms = (t: { seconds?: unknown; nanos?: number | null } | null | undefined) =>
    Number(t?.seconds ?? 0) * 1000 + (t?.nanos ?? 0) / 1e6;
  for (const e of history?.events ?? []) {
    const id = String(e.eventId);
    if (e.activityTaskScheduledEventAttributes)
      typeOf.set(id, e.activityTaskScheduledEventAttributes.activityType?.name ?? '?');
    const started = e.activityTaskStartedEventAttributes;
    if (started) startedAt.set(String(started.scheduledEventId), ms(e.eventTime));
    const completed = e.activityTaskCompletedEventAttributes;
    const type = completed ? typeOf.get(String(completed.scheduledEventId)) : undefined;
    if (completed && type && types.has(type)) {
      const scheduled = String(completed.scheduledEventId);
      out.push([type, (ms(e.eventTime) - (startedAt.get(scheduled) ?? 0)) / 1000]);
    }
  }
  return out;
}

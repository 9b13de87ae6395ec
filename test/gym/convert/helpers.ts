import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/**
 * The NeMo Gym source environments under fixtures/gym: every folder with a summary.json (its
 * decision points counted independently of the converter) and an example_rollouts.jsonl.
 */
export function fixtureEnvironments(gymDir: string): string[] {
  return readdirSync(gymDir, { withFileTypes: true })
    .filter(
      (e) =>
        e.isDirectory() &&
        existsSync(path.join(gymDir, e.name, 'summary.json')) &&
        existsSync(path.join(gymDir, e.name, 'example_rollouts.jsonl')),
    )
    .map((e) => e.name)
    .sort();
}

const tempDirs: string[] = [];
// Removed when the test file's process ends, so a run leaves nothing behind in the temp dir (a
// failing test's files are still there while it is being debugged in the same process).
process.once('exit', () => {
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
});

export function tempDir(): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'convert-test-'));
  tempDirs.push(dir);
  return dir;
}

export function readJsonl(file: string): Record<string, any>[] {
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line));
}

export function writeJsonl(file: string, rows: unknown[]): string {
  writeFileSync(file, rows.map((row) => JSON.stringify(row)).join('\n') + '\n');
  return file;
}

/** A NeMo Gym rollout line with the given input, output, tools and reward. */
export function rollout(output: unknown[], extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    responses_create_params: { input: [{ role: 'user', content: 'hi', type: 'message' }], tools: [tool('lookup')] },
    response: { output },
    reward: 1.0,
    ...extra,
  };
}

export function tool(name: string): Record<string, unknown> {
  return { type: 'function', name, parameters: { type: 'object', properties: {} }, strict: true };
}

export function call(name: string, callId: string, args = '{}'): Record<string, unknown> {
  return { type: 'function_call', name, arguments: args, call_id: callId, id: `fc_${callId}`, status: 'completed' };
}

export function output(callId: string, text = 'ok'): Record<string, unknown> {
  return { type: 'function_call_output', call_id: callId, output: text };
}

export function say(text: string): Record<string, unknown> {
  return {
    type: 'message',
    role: 'assistant',
    status: 'completed',
    content: [{ type: 'output_text', text, annotations: [] }],
  };
}

export function think(text: string): Record<string, unknown> {
  return { type: 'reasoning', id: `rs_${text.length}`, summary: [{ type: 'summary_text', text }] };
}

/**
 * What both source forms carry of an item: ids, statuses, annotations, logprobs and the content-part
 * structure exist only in the Responses form, and reasoning is dropped from inputs by default.
 */
export function project(item: Record<string, any>): Record<string, unknown> | null {
  if (item.type === 'function_call')
    return { type: 'function_call', name: item.name, arguments: item.arguments, call_id: item.call_id };
  if (item.type === 'function_call_output')
    return { type: 'function_call_output', call_id: item.call_id, output: item.output };
  if (item.type === 'reasoning') return null;
  const text = typeof item.content === 'string' ? item.content : (item.content ?? []).map((p: any) => p.text).join('');
  if (item.role === 'assistant' && text === '') return null;
  return { type: 'message', role: item.role, text };
}

export function projectAll(items: Record<string, any>[]): Record<string, unknown>[] {
  return items.map(project).filter((p): p is Record<string, unknown> => p !== null);
}

/** The same projection read straight from Chat Completions messages (independent of the converter). */
export function projectChat(messages: Record<string, any>[]): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (const m of messages) {
    if (m.role === 'tool') {
      out.push({ type: 'function_call_output', call_id: m.tool_call_id, output: m.content });
    } else if (m.role === 'assistant') {
      if (m.content) out.push({ type: 'message', role: 'assistant', text: m.content });
      for (const c of m.tool_calls ?? [])
        out.push({ type: 'function_call', name: c.function.name, arguments: c.function.arguments, call_id: c.id });
    } else {
      out.push({ type: 'message', role: m.role, text: m.content });
    }
  }
  return out;
}

import { inspect } from 'node:util';

/**
 * An error as a person at the terminal needs it: a failed workflow's own message says only that it
 * failed, and the reason (a config error naming what to fix) is at the end of its cause chain, so
 * every distinct message down the chain is shown, the reason last.
 */
export function errorText(err: unknown): string {
  const messages: string[] = [];
  for (let e: unknown = err; e !== undefined && e !== null; e = e instanceof Error ? e.cause : undefined) {
    const message = e instanceof Error ? e.message : typeof e === 'string' ? e : inspect(e);
    if (message !== '' && !messages.includes(message)) messages.push(message);
  }
  return messages.join('\n  caused by: ');
}

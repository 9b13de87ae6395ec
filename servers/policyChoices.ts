import { createHash } from 'node:crypto';
import type { ToolName } from './toolEnvironment';
import { wrongFinalAnswerText, type NextAction, type PlannedCall, type TravelTask } from './travelTasks';

// What the simulated policy does at one decision point: how skilled it is there, and, when a seeded
// draw says it errs, which plausible mistake it makes. The simulator (policySimulator.ts) turns the
// decision into a Responses object.

// Per decision point skill of the untrained policy. Famous landmarks, Fahrenheit and euros are easy;
// obscure landmarks, Kelvin and yen are hard; Kelvin final answers are always rounded wrongly, so
// Kelvin tasks never succeed until training raises that skill.
const LANDMARK_SKILL: Record<string, number> = {
  'Brandenburg Gate': 0.55,
  'Sagrada Familia': 0.55,
  Atomium: 0.12,
  'Little Mermaid': 0.12,
};
const TEMPERATURE_SKILL: Record<string, number> = { F: 0.9, K: 0.3 };
const CURRENCY_SKILL: Record<string, number> = { GBP: 0.6, JPY: 0.08 };
const FLIGHT_PRICE_SKILL = 0.8;

export function baseSkill(task: TravelTask, action: NextAction): number {
  if (action.type === 'answer') return 'unit' in task && task.unit === 'K' ? 0 : 1;
  const args = action.call.arguments;
  switch (action.call.name) {
    case 'find_city_by_landmark':
      return LANDMARK_SKILL[String(args.landmark)] ?? 1;
    case 'get_weather':
      return 1;
    case 'convert_temperature':
      return TEMPERATURE_SKILL[String(args.to_unit)] ?? 1;
    case 'get_flight_price':
      return FLIGHT_PRICE_SKILL;
    case 'convert_currency':
      return CURRENCY_SKILL[String(args.to_currency).toUpperCase()] ?? 1;
  }
}

/** Each training step removes 40% of the remaining error rate at every decision point. */
export function skillAt(base: number, step: number): number {
  return 1 - (1 - base) * 0.6 ** step;
}

/** Seeded draws: each is a hash of the key and its label, so draws do not depend on their order. */
export class Draws {
  constructor(private readonly key: string) {}

  digest(label: string): Buffer {
    return createHash('sha256').update(`${this.key}\u0000${label}`).digest();
  }

  uniform(label: string): number {
    return this.digest(label).readUIntBE(0, 6) / 2 ** 48;
  }

  pick(label: string, n: number): number {
    return this.digest(label).readUInt32BE(8) % n;
  }

  id(prefix: string, label: string): string {
    return `${prefix}_${this.digest(label).toString('hex').slice(0, 24)}`;
  }
}

export type Decision =
  { type: 'call'; call: PlannedCall; why: string } | { type: 'message'; text: string; why: string };

const WRONG_CURRENCY_CODES: Record<string, string> = { EUR: 'EURO', GBP: 'POUND', JPY: 'YEN', USD: 'DOLLAR' };

function wrongArguments(call: PlannedCall, pick: number): PlannedCall {
  const a = call.arguments;
  switch (call.name) {
    case 'find_city_by_landmark':
      return {
        name: call.name,
        arguments: { landmark: pick % 2 === 0 ? `${String(a.landmark)} Monument` : `Old ${String(a.landmark)}` },
      };
    case 'get_weather': {
      const city = String(a.city);
      return {
        name: call.name,
        arguments: { city: pick % 2 === 0 ? city.slice(0, -1) : city === 'London' ? 'Londres' : 'London' },
      };
    }
    case 'convert_temperature':
      return pick % 2 === 0
        ? { name: call.name, arguments: { value: a.value, from_unit: a.to_unit, to_unit: 'C' } }
        : { name: call.name, arguments: { value: a.value, from_unit: 'F', to_unit: a.to_unit } };
    case 'get_flight_price':
      return { name: call.name, arguments: { origin: a.destination, destination: a.origin } };
    case 'convert_currency': {
      const to = String(a.to_currency).toUpperCase();
      return pick % 2 === 0
        ? {
            name: call.name,
            arguments: { amount: a.amount, from_currency: 'USD', to_currency: WRONG_CURRENCY_CODES[to] ?? `${to}X` },
          }
        : { name: call.name, arguments: { amount: a.amount, from_currency: a.to_currency, to_currency: 'USD' } };
    }
  }
}

function wrongTool(call: PlannedCall): PlannedCall {
  const a = call.arguments;
  const swaps: Record<ToolName, () => PlannedCall> = {
    find_city_by_landmark: () => ({ name: 'get_weather', arguments: { city: a.landmark } }),
    get_weather: () => ({ name: 'find_city_by_landmark', arguments: { landmark: a.city } }),
    convert_temperature: () => ({
      name: 'convert_currency',
      arguments: { amount: a.value, from_currency: 'C', to_currency: a.to_unit },
    }),
    get_flight_price: () => ({ name: 'get_weather', arguments: { city: a.destination } }),
    convert_currency: () => ({
      name: 'convert_temperature',
      arguments: { value: a.amount, from_unit: 'C', to_unit: 'F' },
    }),
  };
  return swaps[call.name]();
}

const GIVE_UP_TEXTS = [
  'I am sorry, I could not find that information with the tools I have.',
  'I was not able to complete the lookup. Please check a travel site for the latest details.',
];

export function decide(task: TravelTask, action: NextAction, skill: number, draws: Draws): Decision {
  const correct = draws.uniform('correct') < skill;
  if (action.type === 'answer') {
    return correct
      ? { type: 'message', text: action.answer.text, why: 'I have everything I need, so I can answer now.' }
      : {
          type: 'message',
          text: wrongFinalAnswerText(task, action.facts, draws.pick('variant', 1000)),
          why: 'I have enough to answer.',
        };
  }
  const call = action.call;
  if (correct) return { type: 'call', call, why: `Next I need ${call.name} with ${JSON.stringify(call.arguments)}.` };
  const mistake = draws.uniform('mistake');
  if (mistake < 0.55) {
    const wrong = wrongArguments(call, draws.pick('variant', 1000));
    return { type: 'call', call: wrong, why: `Next I need ${wrong.name} with ${JSON.stringify(wrong.arguments)}.` };
  }
  if (mistake < 0.75) {
    const wrong = wrongTool(call);
    return { type: 'call', call: wrong, why: `I will try ${wrong.name} first.` };
  }
  return {
    type: 'message',
    text: GIVE_UP_TEXTS[draws.pick('variant', GIVE_UP_TEXTS.length)],
    why: 'The tools do not seem to give me this.',
  };
}

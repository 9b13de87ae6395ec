import { z } from 'zod';

// The travel-assistant tool environment served by the embedded resources server. Every tool output
// is a pure function of its arguments, so a rollout replays byte-for-byte and the ground truth of a
// task can be computed once and stored in its row.

interface CityFacts {
  temperatureC: number;
  condition: string;
}

const CITIES: Record<string, CityFacts> = {
  Paris: { temperatureC: 18, condition: 'cloudy' },
  London: { temperatureC: 14, condition: 'rainy' },
  Rome: { temperatureC: 24, condition: 'sunny' },
  Berlin: { temperatureC: 11, condition: 'windy' },
  Barcelona: { temperatureC: 22, condition: 'sunny' },
  Brussels: { temperatureC: 9, condition: 'foggy' },
  Copenhagen: { temperatureC: 7, condition: 'snowy' },
  'New York': { temperatureC: 16, condition: 'windy' },
  Tokyo: { temperatureC: 20, condition: 'rainy' },
  Sydney: { temperatureC: 26, condition: 'sunny' },
};

export const CONDITIONS = ['sunny', 'rainy', 'cloudy', 'snowy', 'windy', 'foggy'] as const;

const LANDMARKS: Record<string, string> = {
  'Eiffel Tower': 'Paris',
  Colosseum: 'Rome',
  'Big Ben': 'London',
  'Statue of Liberty': 'New York',
  'Brandenburg Gate': 'Berlin',
  'Sagrada Familia': 'Barcelona',
  'Sydney Opera House': 'Sydney',
  Atomium: 'Brussels',
  'Little Mermaid': 'Copenhagen',
  'Tokyo Skytree': 'Tokyo',
};

/** Units per US dollar. */
const USD_RATES: Record<string, number> = { USD: 1, EUR: 0.92, GBP: 0.79, JPY: 151.3 };

export const TEMPERATURE_UNITS = { C: 'Celsius', F: 'Fahrenheit', K: 'Kelvin' } as const;
export type TemperatureUnit = keyof typeof TEMPERATURE_UNITS;

const round2 = (x: number): number => Math.round(x * 100) / 100;

const canonicalName = (table: Record<string, unknown>, value: string): string | undefined =>
  Object.keys(table).find((key) => key.toLowerCase() === value.trim().toLowerCase());

// Route prices come from a string hash so that every ordered city pair has its own stable fare.
function routeFareUsd(origin: string, destination: string): number {
  let h = 2166136261;
  for (const ch of `${origin}->${destination}`) {
    h ^= ch.charCodeAt(0);
    h = Math.imul(h, 16777619) >>> 0;
  }
  return 120 + (h % 880);
}

function toCelsius(value: number, unit: TemperatureUnit): number {
  if (unit === 'F') return ((value - 32) * 5) / 9;
  if (unit === 'K') return value - 273.15;
  return value;
}

function fromCelsius(value: number, unit: TemperatureUnit): number {
  if (unit === 'F') return (value * 9) / 5 + 32;
  if (unit === 'K') return value + 273.15;
  return value;
}

const unitSchema = z.enum(['C', 'F', 'K']);

export const toolArgumentSchemas = {
  find_city_by_landmark: z.object({ landmark: z.string() }),
  get_weather: z.object({ city: z.string() }),
  convert_temperature: z.object({ value: z.number(), from_unit: unitSchema, to_unit: unitSchema }),
  get_flight_price: z.object({ origin: z.string(), destination: z.string() }),
  convert_currency: z.object({ amount: z.number(), from_currency: z.string(), to_currency: z.string() }),
};

export type ToolName = keyof typeof toolArgumentSchemas;

export const isToolName = (name: string): name is ToolName => Object.hasOwn(toolArgumentSchemas, name);

export type ToolOutput = Record<string, unknown>;

/** Runs one tool. Bad arguments are a normal tool result (an `error` field), as a real API would answer. */
export function callTool(name: ToolName, args: unknown): ToolOutput {
  const parsed = toolArgumentSchemas[name].safeParse(args);
  if (!parsed.success) {
    return {
      error: `invalid arguments for ${name}: ${parsed.error.issues.map((i) => `${i.path.join('.') || 'body'}: ${i.message}`).join('; ')}`,
    };
  }
  const a = parsed.data as Record<string, unknown>;
  switch (name) {
    case 'find_city_by_landmark': {
      const landmark = canonicalName(LANDMARKS, a.landmark as string);
      return landmark
        ? { landmark, city: LANDMARKS[landmark] }
        : { error: `unknown landmark: ${a.landmark as string}` };
    }
    case 'get_weather': {
      const city = canonicalName(CITIES, a.city as string);
      if (!city) return { error: `unknown city: ${a.city as string}` };
      return { city, temperature_c: CITIES[city].temperatureC, condition: CITIES[city].condition };
    }
    case 'convert_temperature': {
      const from = a.from_unit as TemperatureUnit;
      const to = a.to_unit as TemperatureUnit;
      return { value: round2(fromCelsius(toCelsius(a.value as number, from), to)), unit: to };
    }
    case 'get_flight_price': {
      const origin = canonicalName(CITIES, a.origin as string);
      const destination = canonicalName(CITIES, a.destination as string);
      if (!origin || !destination)
        return { error: `unknown city: ${!origin ? (a.origin as string) : (a.destination as string)}` };
      if (origin === destination) return { error: 'origin and destination are the same city' };
      return { origin, destination, price_usd: routeFareUsd(origin, destination) };
    }
    case 'convert_currency': {
      const from = canonicalName(USD_RATES, a.from_currency as string);
      const to = canonicalName(USD_RATES, a.to_currency as string);
      if (!from || !to)
        return { error: `unknown currency: ${!from ? (a.from_currency as string) : (a.to_currency as string)}` };
      return { amount: round2(((a.amount as number) / USD_RATES[from]) * USD_RATES[to]), currency: to };
    }
  }
}

/** The tool list in the Responses API's flat function-tool form, as rows carry it. */
export function travelTools(): Record<string, unknown>[] {
  const fn = (name: ToolName, description: string, properties: Record<string, unknown>) => ({
    type: 'function',
    name,
    description,
    parameters: { type: 'object', properties, required: Object.keys(properties), additionalProperties: false },
    strict: true,
  });
  const unit = { type: 'string', enum: ['C', 'F', 'K'] };
  return [
    fn('find_city_by_landmark', 'Find the city a famous landmark is in.', {
      landmark: { type: 'string', description: 'Landmark name.' },
    }),
    fn('get_weather', 'Current weather of a city: temperature in Celsius and a condition word.', {
      city: { type: 'string', description: 'City name.' },
    }),
    fn('convert_temperature', 'Convert a temperature between Celsius (C), Fahrenheit (F) and Kelvin (K).', {
      value: { type: 'number' },
      from_unit: unit,
      to_unit: unit,
    }),
    fn('get_flight_price', 'Price in USD of a one-way economy flight between two cities.', {
      origin: { type: 'string', description: 'Departure city.' },
      destination: { type: 'string', description: 'Arrival city.' },
    }),
    fn('convert_currency', 'Convert an amount of money between currencies (ISO codes such as USD, EUR, GBP, JPY).', {
      amount: { type: 'number' },
      from_currency: { type: 'string' },
      to_currency: { type: 'string' },
    }),
  ];
}

function valuesMatch(expected: unknown, actual: unknown): boolean {
  if (typeof expected === 'number' && typeof actual === 'number') return Math.abs(expected - actual) <= 0.011;
  if (typeof expected === 'string' && typeof actual === 'string')
    return expected.trim().toLowerCase() === actual.trim().toLowerCase();
  return JSON.stringify(expected) === JSON.stringify(actual);
}

/** Same tool, same argument keys, equal values (case-insensitive strings, cent-level number tolerance). */
export function toolCallMatches(
  expected: { name: string; arguments: Record<string, unknown> },
  actual: { name: string; arguments: unknown },
): boolean {
  if (expected.name !== actual.name) return false;
  const args = actual.arguments;
  if (typeof args !== 'object' || args === null || Array.isArray(args)) return false;
  const actualArgs = args as Record<string, unknown>;
  const keys = Object.keys(expected.arguments);
  if (keys.length !== Object.keys(actualArgs).length) return false;
  return keys.every((k) => Object.hasOwn(actualArgs, k) && valuesMatch(expected.arguments[k], actualArgs[k]));
}

/** Whether a final answer text states the expected answer: a number within a cent, or the word itself. */
export function answerMatches(expectedAnswer: string, text: string): boolean {
  const expectedNumber = Number(expectedAnswer);
  if (expectedAnswer.trim() !== '' && Number.isFinite(expectedNumber)) {
    const numbers = text.replace(/(\d),(\d{3})/g, '$1$2').match(/-?\d+(?:\.\d+)?/g) ?? [];
    return numbers.some((n) => Math.abs(Number(n) - expectedNumber) <= 0.011);
  }
  const escaped = expectedAnswer.trim().replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(`\\b${escaped}\\b`, 'i').test(text);
}

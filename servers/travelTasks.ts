import {
  callTool,
  CONDITIONS,
  TEMPERATURE_UNITS,
  type TemperatureUnit,
  type ToolName,
  type ToolOutput,
} from './toolEnvironment';

// The task families of the travel-assistant environment: how a task is worded for the user, how the
// wording is read back (the simulated policy only sees the conversation), and the tool plan that
// solves it. One plan drives both the ground truth stored in demo rows and the simulator's oracle.

export type TravelTask =
  | { kind: 'weather_condition'; city: string }
  | { kind: 'temperature'; city: string; unit: TemperatureUnit }
  | { kind: 'landmark_temperature'; landmark: string; unit: TemperatureUnit }
  | { kind: 'flight_price'; origin: string; destination: string; currency: string }
  | { kind: 'landmark_flight_price'; origin: string; landmark: string; currency: string }
  | { kind: 'landmarks_flight_price'; fromLandmark: string; toLandmark: string; currency: string };

export interface PlannedCall {
  name: ToolName;
  arguments: Record<string, unknown>;
}

/** Values learned from tool outputs so far, by name (`city`, `temperature_c`, `price_usd`, ...). */
type Facts = Record<string, unknown>;

interface PlanStep {
  call: (facts: Facts) => PlannedCall;
  learn: (output: ToolOutput, facts: Facts) => void;
}

export interface FinalAnswer {
  /** What the verifier looks for in the final message. */
  answer: string;
  text: string;
}

const UNIT_WORDS: Record<string, TemperatureUnit> = { celsius: 'C', fahrenheit: 'F', kelvin: 'K' };

export function renderUserPrompt(task: TravelTask): string {
  switch (task.kind) {
    case 'weather_condition':
      return `What is the weather like in ${task.city} right now?`;
    case 'temperature':
      return `What is the current temperature in ${task.city} in ${TEMPERATURE_UNITS[task.unit]}?`;
    case 'landmark_temperature':
      return `What is the current temperature in ${TEMPERATURE_UNITS[task.unit]} in the city where the ${task.landmark} is?`;
    case 'flight_price':
      return `How much does a flight from ${task.origin} to ${task.destination} cost in ${task.currency}?`;
    case 'landmark_flight_price':
      return `I am in ${task.origin}. How much is a flight to the city of the ${task.landmark}, in ${task.currency}?`;
    case 'landmarks_flight_price':
      return `How much is a flight from the city of the ${task.fromLandmark} to the city of the ${task.toLandmark}, in ${task.currency}?`;
  }
}

const PROMPT_PATTERNS: Array<[RegExp, (m: RegExpMatchArray) => TravelTask | undefined]> = [
  [/^What is the weather like in (.+) right now\?$/, (m) => ({ kind: 'weather_condition', city: m[1] })],
  [
    /^What is the current temperature in (.+) in (\w+)\?$/,
    (m) => withUnit(m[2], (unit) => ({ kind: 'temperature', city: m[1], unit })),
  ],
  [
    /^What is the current temperature in (\w+) in the city where the (.+) is\?$/,
    (m) => withUnit(m[1], (unit) => ({ kind: 'landmark_temperature', landmark: m[2], unit })),
  ],
  [
    /^How much does a flight from (.+) to (.+) cost in (\w+)\?$/,
    (m) => ({ kind: 'flight_price', origin: m[1], destination: m[2], currency: m[3] }),
  ],
  [
    /^I am in (.+)\. How much is a flight to the city of the (.+), in (\w+)\?$/,
    (m) => ({ kind: 'landmark_flight_price', origin: m[1], landmark: m[2], currency: m[3] }),
  ],
  [
    /^How much is a flight from the city of the (.+) to the city of the (.+), in (\w+)\?$/,
    (m) => ({ kind: 'landmarks_flight_price', fromLandmark: m[1], toLandmark: m[2], currency: m[3] }),
  ],
];

function withUnit(word: string, build: (unit: TemperatureUnit) => TravelTask): TravelTask | undefined {
  const unit = UNIT_WORDS[word.toLowerCase()];
  return unit ? build(unit) : undefined;
}

export function parseUserPrompt(text: string): TravelTask | undefined {
  const trimmed = text.trim();
  for (const [pattern, build] of PROMPT_PATTERNS) {
    const m = trimmed.match(pattern);
    if (m) return build(m);
  }
  return undefined;
}

const step = (call: PlanStep['call'], learn: PlanStep['learn']): PlanStep => ({ call, learn });

const findCity = (cityKey: string, landmark: string): PlanStep =>
  step(
    () => ({ name: 'find_city_by_landmark', arguments: { landmark } }),
    (out, f) => {
      f[cityKey] = out.city;
    },
  );

const weather = (cityOf: (f: Facts) => unknown): PlanStep =>
  step(
    (f) => ({ name: 'get_weather', arguments: { city: cityOf(f) } }),
    (out, f) => {
      f.temperature_c = out.temperature_c;
      f.condition = out.condition;
    },
  );

const toUnit = (unit: TemperatureUnit): PlanStep =>
  step(
    (f) => ({ name: 'convert_temperature', arguments: { value: f.temperature_c, from_unit: 'C', to_unit: unit } }),
    (out, f) => {
      f.temperature = out.value;
    },
  );

const fare = (originOf: (f: Facts) => unknown, destinationOf: (f: Facts) => unknown): PlanStep =>
  step(
    (f) => ({ name: 'get_flight_price', arguments: { origin: originOf(f), destination: destinationOf(f) } }),
    (out, f) => {
      f.price_usd = out.price_usd;
      f.price = out.price_usd;
    },
  );

const toCurrency = (currency: string): PlanStep =>
  step(
    (f) => ({
      name: 'convert_currency',
      arguments: { amount: f.price_usd, from_currency: 'USD', to_currency: currency },
    }),
    (out, f) => {
      f.price = out.amount;
    },
  );

function temperatureSteps(unit: TemperatureUnit): PlanStep[] {
  return unit === 'C' ? [] : [toUnit(unit)];
}

function currencySteps(currency: string): PlanStep[] {
  return currency.toUpperCase() === 'USD' ? [] : [toCurrency(currency)];
}

export function planSteps(task: TravelTask): PlanStep[] {
  switch (task.kind) {
    case 'weather_condition':
      return [weather(() => task.city)];
    case 'temperature':
      return [weather(() => task.city), ...temperatureSteps(task.unit)];
    case 'landmark_temperature':
      return [findCity('city', task.landmark), weather((f) => f.city), ...temperatureSteps(task.unit)];
    case 'flight_price':
      return [
        fare(
          () => task.origin,
          () => task.destination,
        ),
        ...currencySteps(task.currency),
      ];
    case 'landmark_flight_price':
      return [
        findCity('city', task.landmark),
        fare(
          () => task.origin,
          (f) => f.city,
        ),
        ...currencySteps(task.currency),
      ];
    case 'landmarks_flight_price':
      return [
        findCity('from_city', task.fromLandmark),
        findCity('to_city', task.toLandmark),
        fare(
          (f) => f.from_city,
          (f) => f.to_city,
        ),
        ...currencySteps(task.currency),
      ];
  }
}

const fmt = (x: unknown): string => (typeof x === 'number' ? String(Math.round(x * 100) / 100) : String(x));

export function finalAnswer(task: TravelTask, facts: Facts): FinalAnswer {
  switch (task.kind) {
    case 'weather_condition':
      return { answer: String(facts.condition), text: `It is ${String(facts.condition)} in ${task.city} right now.` };
    case 'temperature':
    case 'landmark_temperature': {
      const value = task.unit === 'C' ? facts.temperature_c : facts.temperature;
      const where = task.kind === 'temperature' ? task.city : String(facts.city);
      return {
        answer: fmt(value),
        text: `The current temperature in ${where} is ${fmt(value)} ${TEMPERATURE_UNITS[task.unit]}.`,
      };
    }
    case 'flight_price':
    case 'landmark_flight_price':
    case 'landmarks_flight_price':
      return { answer: fmt(facts.price), text: `The flight costs ${fmt(facts.price)} ${task.currency.toUpperCase()}.` };
  }
}

/** A wrong but plausible final answer: what a policy says when it mixes up the values it has. */
export function wrongFinalAnswerText(task: TravelTask, facts: Facts, pick: number): string {
  switch (task.kind) {
    case 'weather_condition': {
      const others = CONDITIONS.filter((c) => c !== facts.condition);
      return `It is ${others[pick % others.length]} in ${task.city} right now.`;
    }
    case 'temperature':
    case 'landmark_temperature': {
      const celsius = Number(facts.temperature_c);
      // Kelvin answers rounded to whole degrees are the classic slip; otherwise the policy forgets to convert.
      const value =
        task.unit === 'K'
          ? Math.round(Number(facts.temperature))
          : task.unit === 'C'
            ? celsius + 1 + (pick % 3)
            : celsius;
      return `The current temperature is ${value} ${TEMPERATURE_UNITS[task.unit]}.`;
    }
    case 'flight_price':
    case 'landmark_flight_price':
    case 'landmarks_flight_price': {
      const usd = Number(facts.price_usd);
      const value = task.currency.toUpperCase() === 'USD' ? usd + 10 * (1 + (pick % 5)) : usd;
      return `The flight costs ${value} ${task.currency.toUpperCase()}.`;
    }
  }
}

export interface CompletedCall {
  name: string;
  arguments: unknown;
  output: unknown;
}

export type NextAction =
  | { type: 'call'; stepIndex: number; call: PlannedCall; facts: Facts }
  | { type: 'answer'; answer: FinalAnswer; facts: Facts };

/**
 * The correct next action given the calls already answered in the conversation. A plan step counts
 * as done when some earlier call matches it and returned a result without `error`, so a policy that
 * recovers from a mistake is judged on where it stands now, not on how it got there.
 */
export function nextAction(
  task: TravelTask,
  completed: CompletedCall[],
  matches: (expected: PlannedCall, actual: CompletedCall) => boolean,
): NextAction {
  const facts: Facts = {};
  const steps = planSteps(task);
  for (let i = 0; i < steps.length; i++) {
    const call = steps[i].call(facts);
    const done = completed.find(
      (c) => matches(call, c) && typeof c.output === 'object' && c.output !== null && !Object.hasOwn(c.output, 'error'),
    );
    if (!done) return { type: 'call', stepIndex: i, call, facts };
    steps[i].learn(done.output as ToolOutput, facts);
  }
  return { type: 'answer', answer: finalAnswer(task, facts), facts };
}

/** Ground truth of a task: the calls of its plan and the final answer, computed by running the tools. */
export function solveTask(task: TravelTask): { calls: PlannedCall[]; answer: string } {
  const facts: Facts = {};
  const calls: PlannedCall[] = [];
  for (const s of planSteps(task)) {
    const call = s.call(facts);
    const output = callTool(call.name, call.arguments);
    if (Object.hasOwn(output, 'error'))
      throw new Error(`task ${JSON.stringify(task)} cannot be solved: ${String(output.error)}`);
    calls.push(call);
    s.learn(output, facts);
  }
  return { calls, answer: finalAnswer(task, facts).answer };
}

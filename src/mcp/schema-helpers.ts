// Zod building blocks whose error messages name the argument and say what it accepts, because the
// SDK passes them verbatim to the caller in an `isError` result ("... at timeout_seconds").

import { z } from 'zod';

/** A required or optional non-empty string argument. */
export function text(name: string, what: string, options: { allowEmpty?: boolean; max?: number } = {}) {
  let schema = z.string({
    error: (issue) => (issue.input === undefined ? `${name} is required: ${what}` : `${name} must be a string: ${what}`),
  });
  if (!options.allowEmpty) schema = schema.min(1, { error: `${name} must not be empty: ${what}` });
  if (options.max !== undefined) schema = schema.max(options.max, { error: `${name} is longer than ${options.max} characters` });
  return schema.describe(what);
}

/** A number argument with an inclusive range, integer or not. */
export function number(name: string, what: string, range: { min: number; max: number; integer?: boolean; exclusiveMin?: boolean; unit: string }) {
  const lower = range.exclusiveMin ? `more than ${range.min}` : `at least ${range.min}`;
  const message = `${name} must be ${range.integer ? 'an integer ' : 'a number '}${lower} and at most ${range.max} (${range.unit})`;
  let schema = z.number({ error: message });
  if (range.integer) schema = schema.int({ error: message });
  schema = range.exclusiveMin ? schema.gt(range.min, { error: message }) : schema.gte(range.min, { error: message });
  return schema.lte(range.max, { error: message }).describe(what);
}

/** One of a fixed set of strings. */
export function oneOf<const T extends string>(name: string, values: readonly T[], what: string) {
  return z.enum(nonEmpty(name, values), { error: `${name} must be one of: ${values.join(', ')}` }).describe(what);
}

/** The values as the non-empty tuple an enum needs (a vocabulary table typed as a plain array). */
function nonEmpty<T extends string>(name: string, values: readonly T[]): readonly [T, ...T[]] {
  const [first, ...rest] = values;
  if (first === undefined) throw new TypeError(`${name}: an enum needs at least one value`);
  return [first, ...rest];
}

/** A strict object: an unknown argument is an error that lists the arguments the tool takes. */
export function args<S extends z.ZodRawShape>(tool: string, shape: S) {
  const known = Object.keys(shape);
  return z.strictObject(shape, {
    error: (issue) =>
      issue.code === 'unrecognized_keys'
        ? `${tool} does not take ${issue.keys.map((k) => JSON.stringify(k)).join(', ')}; its arguments are: ${known.length > 0 ? known.join(', ') : '(none)'}`
        : undefined,
  });
}

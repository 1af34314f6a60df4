/**
 * Query parameters for ClickHouse statements built from user input.
 *
 * Every user-supplied value reaches ClickHouse as a typed `{pN:Type}` placeholder and travels in
 * `query_params` (sent apart from the statement text), never spliced into SQL. The placeholder
 * names and types are ours; only values are the user's. Equal values of the same type share one
 * placeholder, so two identical expressions compile to identical SQL (GROUP BY / ORDER BY matching
 * relies on that).
 */

export type ParamType = 'String' | 'Int64' | 'UInt64' | 'Float64' | 'Bool' | 'Array(String)';
export type ParamValue = string | number | bigint | boolean | readonly string[];

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
const UINT64_MAX = 2n ** 64n - 1n;

export class Params {
  readonly values: Record<string, ParamValue> = {};
  private readonly seen = new Map<string, string>();

  add(value: ParamValue, type: ParamType): string {
    // JSON for lists: String(['a,b']) and String(['a', 'b']) would be the same key
    const key = `${type}:${typeof value}:${Array.isArray(value) ? JSON.stringify(value) : String(value)}`;
    let name = this.seen.get(key);
    if (!name) {
      name = `p${this.seen.size}`;
      this.seen.set(key, name);
      this.values[name] = value;
    }
    return `{${name}:${type}}`;
  }

  string(value: string): string {
    return this.add(value, 'String');
  }

  /** A list of strings as one `Array(String)` parameter (the client sends it as an array literal, escaped). */
  strings(values: readonly string[]): string {
    return this.add([...values], 'Array(String)');
  }

  /**
   * Integers go as Int64 (UInt64 from 2^63 to 2^64 − 1, as ClickHouse types such a literal), every
   * other number as Float64. A bigint goes as its exact digits; a whole float beyond ±2^53 as its
   * text (chDB refuses to send such a JavaScript number, it has lost digits; ClickHouse reads `1e+21`).
   */
  number(value: number | bigint): string {
    if (typeof value === 'bigint') {
      if (value >= INT64_MIN && value <= INT64_MAX) return this.add(value, 'Int64');
      if (value >= 0n && value <= UINT64_MAX) return this.add(value, 'UInt64');
      return this.number(Number(value));
    }
    if (Number.isSafeInteger(value)) return this.add(value, 'Int64');
    if (!Number.isFinite(value)) throw new RangeError(`Cannot send ${value} to ClickHouse`);
    return this.add(Number.isInteger(value) ? String(value) : value, 'Float64');
  }
}

/**
 * An event property as a `Nullable(String)`: JSON strings unquoted and unescaped, other JSON
 * values as their JSON text (`42`, `true`, `[1,2]`, `{"a":1}`), missing keys and JSON null as
 * NULL. Several keys address nested objects (`properties.a.b`).
 */
export function propertySql(keys: readonly string[], params: Params): string {
  const path = ['properties', ...keys.map((k) => params.string(k))].join(', ');
  // One parse of the event's JSON: the raw value (ClickHouse computes the repeated expression
  // once), then only a string value is parsed again, on its own few bytes.
  const raw = `JSONExtractRaw(${path})`;
  return `multiIf(${raw} IN ('', 'null'), NULL, startsWith(${raw}, '"'), JSONExtractString(${raw}), ${raw})`;
}

/** A date-time value given as text, parsed by ClickHouse (microseconds and offsets kept). */
export const dateTimeParamSql = (text: string, params: Params) =>
  `parseDateTime64BestEffort(${params.string(text)}, 6, 'UTC')`;

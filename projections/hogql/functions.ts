/**
 * The functions a HogQL query may call, after PostHog's posthog/hogql/functions/mapping.py: a
 * HogQL name → the ClickHouse function it prints as. Anything else is refused with a 400 naming
 * it, so no query reaches ClickHouse's file, URL, dictionary, system or other side-effecting
 * functions. Argument counts and types are left to ClickHouse, whose errors answer 400 too.
 */

/** Same name in HogQL and ClickHouse. */
const SAME = `
  and or not xor if multiIf coalesce ifNull nullIf isNull isNotNull assumeNotNull toNullable
  equals notEquals less greater lessOrEquals greaterOrEquals plus minus multiply divide intDiv
  intDivOrZero modulo moduloOrZero negate abs gcd lcm
  isFinite isInfinite isNaN round roundBankers floor ceil trunc sqrt cbrt exp exp2 exp10 log log2
  log10 ln pow power sign sin cos tan asin acos atan atan2 pi e greatest least
  toInt8OrNull toInt16OrNull toInt32OrNull toInt64OrNull toUInt8OrNull toUInt16OrNull
  toUInt32OrNull toUInt64OrNull toInt8OrZero toInt16OrZero toInt32OrZero toInt64OrZero
  toUInt8OrZero toUInt16OrZero toUInt32OrZero toUInt64OrZero toFloat32OrNull toFloat64OrNull
  toFloat32OrZero toFloat64OrZero toDecimal64 toDecimal128
  toString toFixedString toTypeName toBool toUUIDOrNull reinterpretAsString
  toDate toDateOrNull toDate32 toDateTime toDateTime64 toDateTimeOrNull parseDateTimeBestEffort
  parseDateTimeBestEffortOrNull parseDateTime64BestEffortOrNull parseDateTimeOrNull
  toYear toQuarter toMonth toDayOfYear toDayOfMonth toDayOfWeek toHour toMinute toSecond
  toUnixTimestamp toUnixTimestamp64Milli toStartOfYear toStartOfQuarter toStartOfMonth
  toStartOfWeek toMonday toStartOfDay toStartOfHour toStartOfMinute toStartOfSecond
  toStartOfFifteenMinutes toStartOfFiveMinutes toStartOfTenMinutes toStartOfInterval
  toYYYYMM toYYYYMMDD toYYYYMMDDhhmmss toISOWeek toISOYear toWeek toYearWeek toTimeZone
  toRelativeDayNum toRelativeHourNum toRelativeWeekNum toRelativeMonthNum toRelativeYearNum
  now now64 today yesterday timeSlot dateDiff dateAdd dateSub date_add date_sub date_diff
  addSeconds addMinutes addHours addDays addWeeks addMonths addYears subtractSeconds
  subtractMinutes subtractHours subtractDays subtractWeeks subtractMonths subtractYears
  formatDateTime fromUnixTimestamp fromUnixTimestamp64Milli makeDate makeDateTime
  toIntervalSecond toIntervalMinute toIntervalHour toIntervalDay toIntervalWeek
  toIntervalMonth toIntervalQuarter toIntervalYear
  empty notEmpty length lengthUTF8 lower upper lowerUTF8 upperUTF8 reverse concat substring
  substringUTF8 appendTrailingCharIfAbsent leftPad rightPad left right trim trimLeft trimRight
  trimBoth startsWith endsWith position positionCaseInsensitive positionUTF8 locate replace
  replaceOne replaceAll replaceRegexpOne replaceRegexpAll match like ilike notLike notILike
  extract extractAll extractGroups splitByChar splitByString splitByRegexp arrayStringConcat
  repeat format base64Encode base64Decode tryBase64Decode hex unhex lowerUTF8 normalizeUTF8NFC
  encodeURLComponent decodeURLComponent domain domainWithoutWWW topLevelDomain protocol path
  pathFull queryString fragment extractURLParameter extractURLParameters cutQueryString
  cutWWW cutURLParameter URLHierarchy URLPathHierarchy
  MD5 SHA1 SHA256 cityHash64 sipHash64 xxHash32 xxHash64 murmurHash3_64 farmFingerprint64
  JSONHas JSONLength JSONType JSONExtract JSONExtractUInt JSONExtractInt JSONExtractFloat
  JSONExtractBool JSONExtractString JSONExtractRaw JSONExtractArrayRaw JSONExtractKeys
  JSONExtractKeysAndValues JSONExtractKeysAndValuesRaw isValidJSON toJSONString
  array range arrayConcat arrayElement has hasAll hasAny indexOf countEqual arrayEnumerate
  arrayEnumerateUniq arrayPopBack arrayPopFront arrayPushBack arrayPushFront arraySlice
  arraySort arrayReverseSort arrayUniq arrayJoin arrayDistinct arrayReverse arrayFlatten
  arrayCompact arrayZip arrayMap arrayFilter arrayFill arrayExists arrayAll arraySum
  arrayAvg arrayMin arrayMax arrayCount arrayFirst arrayLast arrayFirstIndex arrayLastIndex
  arrayCumSum arrayDifference arrayReduce arrayResize arrayIntersect arraySplit
  arrayStringConcat arrayProduct arrayRotateLeft arrayRotateRight arrayShuffle emptyArrayString
  tuple tupleElement untuple mapFromArrays map mapKeys mapValues mapContains
  bitAnd bitOr bitXor bitNot bitShiftLeft bitShiftRight
  generateUUIDv4 rand rand64 randCanonical isValidUTF8 toValidUTF8 IPv4NumToString
  IPv4StringToNum isIPv4String isIPv6String runningDifference neighbor
  row_number rank dense_rank percent_rank ntile first_value last_value nth_value
  lagInFrame leadInFrame cumeDist
`;

/** HogQL's names that print as another ClickHouse function. */
const RENAMED: Readonly<Record<string, string>> = {
  lag: 'lagInFrame',
  lead: 'leadInFrame',
  toIntOrZero: 'toInt64OrZero',
  toIntOrNull: 'toInt64OrNull',
  toFloatOrZero: 'toFloat64OrZero',
  toFloatOrNull: 'toFloat64OrNull',
  // PostHog's `_toDate` style helpers are internal; the public `toDate`/`toDateTime` stay
  ifnull: 'ifNull',
  nullif: 'nullIf',
  isnull: 'isNull',
  isnotnull: 'isNotNull',
  substr: 'substring',
  lcase: 'lower',
  ucase: 'upper',
  mid: 'substring',
};

/**
 * Conversions PostHog prints as `accurateCastOrNull(x, 'Type')` (mapping.py): they take a
 * number as well as a string (toInt64OrNull refuses a number) and answer NULL for what does not
 * convert (text that is no number, a value past the type's range). `toDecimal(x, scale)` prints
 * as `accurateCastOrNull(x, 'Decimal64(scale)')`.
 */
const CASTS: Readonly<Record<string, string>> = {
  toInt: 'Int64',
  toInt8: 'Int8',
  toInt16: 'Int16',
  toInt32: 'Int32',
  toInt64: 'Int64',
  toUInt8: 'UInt8',
  toUInt16: 'UInt16',
  toUInt32: 'UInt32',
  toUInt64: 'UInt64',
  toFloat: 'Float64',
  toFloat32: 'Float32',
  toFloat64: 'Float64',
  toUUID: 'UUID',
  toDecimal: 'Decimal64',
};

/** Aggregates, which also take ClickHouse's -If, -Array, -OrNull, -Distinct combinators. */
const AGGREGATES = `
  count countIf sum avg min max any anyLast anyHeavy argMin argMax uniq uniqExact uniqHLL12
  uniqCombined uniqCombined64 uniqTheta groupArray groupUniqArray groupArraySample
  groupArrayMovingSum groupArrayInsertAt groupBitAnd groupBitOr groupBitXor median
  medianExact quantile quantiles quantileExact quantileTiming quantileDeterministic
  quantilesExact stddevPop stddevSamp varPop varSamp covarPop covarSamp corr
  topK topKWeighted sumMap minMap maxMap histogram simpleLinearRegression
  windowFunnel retention sequenceMatch sequenceCount sumCount avgWeighted boundingRatio
  skewPop skewSamp kurtPop kurtSamp entropy uniqUpTo
`;
const COMBINATORS = ['If', 'Array', 'OrNull', 'Distinct', 'ArrayIf'] as const;

const words = (text: string) => text.split(/\s+/).filter(Boolean);
const aggregates = new Set(words(AGGREGATES));
const functions = new Map<string, string>(words(SAME).map((n) => [n, n]));
for (const [from, to] of Object.entries(RENAMED)) functions.set(from, to);
for (const name of Object.keys(CASTS)) functions.set(name, 'accurateCastOrNull');
/** SQL's usual upper/lower-case spellings (COUNT, Sum) of aggregates and common functions */
const byLowerCase = new Map<string, string>();
for (const name of [...functions.keys(), ...aggregates])
  if (!byLowerCase.has(name.toLowerCase())) byLowerCase.set(name.toLowerCase(), name);

export type KnownFunction = Readonly<{
  clickhouse: string;
  aggregate: boolean;
  /** the ClickHouse type a conversion casts to (see CASTS) */
  castTo?: string;
}>;

const aggregateBase = (name: string): string | undefined => {
  if (aggregates.has(name)) return name;
  for (const c of COMBINATORS)
    if (name.endsWith(c) && aggregates.has(name.slice(0, -c.length))) return name;
  return undefined;
};

/** The ClickHouse function `name` prints as, or undefined when HogQL does not allow it. */
export function knownFunction(name: string): KnownFunction | undefined {
  const exact = byLowerCase.get(name.toLowerCase());
  const spelled = functions.has(name) || aggregateBase(name) ? name : exact;
  if (!spelled) return undefined;
  const agg = aggregateBase(spelled);
  if (agg) return { clickhouse: agg, aggregate: true };
  const printed = functions.get(spelled);
  if (!printed) return undefined;
  const castTo = Object.hasOwn(CASTS, spelled) ? CASTS[spelled] : undefined;
  return castTo
    ? { clickhouse: printed, aggregate: false, castTo }
    : { clickhouse: printed, aggregate: false };
}

/** Every function name HogQL accepts, for the schema and for tests. */
export const allowedFunctionNames = (): string[] =>
  [...functions.keys(), ...aggregates, 'sparkline', 'getTrafficType'].sort();

/**
 * Table functions a FROM may name: only `numbers` (a generated sequence, no data of anyone's;
 * bounded by the query's row and time limits). `file`, `url`, `remote`, `s3`, `postgresql`,
 * `system.*` and every other are refused.
 */
export const TABLE_FUNCTIONS: ReadonlySet<string> = new Set(['numbers']);

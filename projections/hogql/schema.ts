/**
 * The tables a HogQL query can name and their fields, after PostHog's
 * posthog/hogql/database/schema/*.py, over this project's read models: `events` and
 * `person_distinct_ids` in ClickHouse, `persons`, `groups` and `cohort_people` in Postgres (read
 * through ClickHouse's `postgresql()` table function, tables.ts). Fields are what a query may
 * name; `type` is PostHog's field type, as its DatabaseSchemaQuery answers it.
 */

export type FieldType =
  | 'integer'
  | 'float'
  | 'string'
  | 'datetime'
  | 'boolean'
  | 'json'
  | 'lazy_table'
  | 'virtual_table';

export type TableName = 'events' | 'persons' | 'person_distinct_ids' | 'groups' | 'cohort_people';

/** A field and the column of the table's scoped source (tables.ts) that holds it. */
export type Field = Readonly<{
  type: FieldType;
  column?: string;
  /** for `person` / `pdi`: the table whose fields follow the dot */
  table?: TableName;
}>;

const f = (type: FieldType, column?: string): Field => (column ? { type, column } : { type });

/** Columns the scoped sources add for the lazy joins (never nameable: they start with `__`). */
export const PERSON_ID = '__person_id';
export const PERSON_PROPERTIES = '__person_properties';
export const PERSON_CREATED_AT = '__person_created_at';
export const PERSON_IS_IDENTIFIED = '__person_is_identified';
/** persons.pdi: one row per distinct id of the person, as PostHog's lazy join */
export const PDI_DISTINCT_ID = '__pdi_distinct_id';

export const TABLES: Readonly<Record<TableName, Readonly<Record<string, Field>>>> = {
  events: {
    uuid: f('string'),
    event: f('string'),
    properties: f('json'),
    timestamp: f('datetime'),
    distinct_id: f('string'),
    elements_chain: f('string'),
    created_at: f('datetime'),
    $group_0: f('string'),
    $group_1: f('string'),
    $group_2: f('string'),
    $group_3: f('string'),
    $group_4: f('string'),
    person_id: f('string', PERSON_ID),
    person: { type: 'lazy_table', table: 'persons' },
    pdi: { type: 'lazy_table', table: 'person_distinct_ids' },
  },
  persons: {
    id: f('string'),
    created_at: f('datetime'),
    properties: f('json'),
    is_identified: f('boolean'),
    pdi: { type: 'lazy_table', table: 'person_distinct_ids' },
  },
  person_distinct_ids: {
    distinct_id: f('string'),
    person_id: f('string'),
    person: { type: 'lazy_table', table: 'persons' },
  },
  groups: {
    index: f('integer'),
    key: f('string'),
    created_at: f('datetime'),
    properties: f('json'),
  },
  cohort_people: {
    person_id: f('string'),
    cohort_id: f('integer'),
    person: { type: 'lazy_table', table: 'persons' },
  },
};

/** What `SELECT *` over each table returns, as PostHog's asterisk expansion (lazy fields left out). */
export const ASTERISK: Readonly<Record<TableName, readonly string[]>> = {
  events: [
    'uuid',
    'event',
    'properties',
    'timestamp',
    'distinct_id',
    'elements_chain',
    'created_at',
  ],
  persons: ['id', 'created_at', 'properties', 'is_identified'],
  person_distinct_ids: ['distinct_id', 'person_id'],
  groups: ['index', 'key', 'created_at', 'properties'],
  cohort_people: ['person_id', 'cohort_id'],
};

/**
 * Event properties read as numbers. PostHog types properties by their definitions (Numeric →
 * a cast to Float64); we hold no definitions, so these are the numeric ones of PostHog's
 * taxonomy that its web SDK sends. Any other property is text unless the query casts it.
 */
export const NUMERIC_EVENT_PROPERTIES: ReadonlySet<string> = new Set([
  '$screen_height',
  '$screen_width',
  '$viewport_height',
  '$viewport_width',
  '$prev_pageview_duration',
  '$prev_pageview_last_scroll',
  '$prev_pageview_last_scroll_percentage',
  '$prev_pageview_max_scroll',
  '$prev_pageview_max_scroll_percentage',
  '$prev_pageview_last_content',
  '$prev_pageview_last_content_percentage',
  '$prev_pageview_max_content',
  '$prev_pageview_max_content_percentage',
]);

export const isTableName = (name: string): name is TableName => Object.hasOwn(TABLES, name);

/** PostHog's DatabaseSchemaQueryResponse `tables`: name → {type, id, name, fields}. */
export function hogqlDatabaseSchema(): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(TABLES).map(([name, fields]) => [
      name,
      {
        type: 'posthog',
        id: name,
        name,
        fields: Object.fromEntries(
          Object.entries(fields).map(([field, def]) => [
            field,
            {
              name: field,
              hogql_value: field,
              type: def.type,
              schema_valid: true,
              ...(def.table ? { table: def.table, fields: Object.keys(TABLES[def.table]) } : {}),
            },
          ]),
        ),
      },
    ]),
  );
}

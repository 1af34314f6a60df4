import type { FastifyContextConfig } from 'fastify';
import { jsonSchemaTransform } from 'fastify-type-provider-zod';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** what the OpenAPI document says beyond the zod schemas (validation is unaffected) */
    openapi?: Readonly<{
      /** every content type the body may come in (capture: JSON, form, multipart, gzip…) */
      consumes?: readonly string[];
      /** the 200 answer is also `text/csv` (with `format=csv`) */
      csv?: boolean;
    }>;
  }
}

type Transformed = ReturnType<typeof jsonSchemaTransform>;
type TransformInput = Parameters<typeof jsonSchemaTransform>[0];

const CSV = {
  type: 'string',
  description: 'CSV (RFC 4180) with a header row, with `format=csv`',
} as const;

/**
 * The zod transform, then the media types a zod schema cannot say: several request content types
 * (`consumes`, which @fastify/swagger applies to the body schema) and a `text/csv` variant of the
 * 200 answer (an OpenAPI `content` map beside the JSON one).
 */
export function openapiTransform(input: TransformInput): Transformed {
  const out = jsonSchemaTransform(input);
  const extra = (input.route.config as FastifyContextConfig | undefined)?.openapi;
  if (!extra) return out;
  const schema = { ...(out.schema as Record<string, unknown>) };
  if (extra.consumes) schema.consumes = [...extra.consumes];
  const responses = schema.response as Record<string, Record<string, unknown>> | undefined;
  const ok = responses?.['200'];
  if (extra.csv && responses && ok) {
    const { description, ...json } = ok;
    schema.response = {
      ...responses,
      200: {
        description: description ?? 'Default Response',
        content: { 'application/json': { schema: json }, 'text/csv': { schema: CSV } },
      },
    };
  }
  return { ...out, schema } as Transformed;
}

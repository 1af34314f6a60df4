import {
  type DomainError,
  forbidden,
  tooLarge,
  unauthenticated,
  validation,
} from '../src/core/errors.ts';

/**
 * A refused capture request. The capture steps return it instead of throwing (capture is the hot
 * path); it carries the kernel's `DomainError`, which the route answers with `httpError`, so every
 * failure has PostHog's body shape `{type, code, detail, attr}` (api-spec.md "Errors", capture.md §2.1).
 */
export type CaptureFailure = Readonly<{ ok: false; error: CaptureError }>;
/** What capture refuses with: 400 (validation), 401 (unauthenticated), 403 (forbidden) or 413 (too_large). */
export type CaptureError = DomainError &
  Readonly<{ kind: 'validation' | 'unauthenticated' | 'forbidden' | 'too_large' }>;

const refuse = (error: CaptureError): CaptureFailure => ({ ok: false, error });

/** The scope a personal API key needs to capture: capture writes events (and, through them, persons). */
export const CAPTURE_SCOPE = 'event:write';

/** A personal API key without the capture scope, as the /api routes answer a missing scope: 403. */
export const missingCaptureScope = (scope = CAPTURE_SCOPE): CaptureFailure =>
  refuse(forbidden(`API key missing required scope '${scope}'`));

/** Decision 4: anything malformed is one 400 code; the detail says what. */
export const invalidPayload = (detail: string): CaptureFailure =>
  refuse(validation('invalid_payload', detail));

/** Django's exact words for "the request carried nothing to read" (capture.md §2.1). */
export const noData = (): CaptureFailure =>
  refuse(
    validation(
      'no_data',
      'No data found. Make sure to use a POST request when sending the payload in the body of the request.',
    ),
  );

/** A decompressed payload over the configured cap (capture-rs "maximum event size exceeded"): 413. */
export const payloadTooLarge = (limit: number): CaptureFailure =>
  refuse(tooLarge(`maximum event size exceeded: the decoded payload is over ${limit} bytes`));

/** One event over the event size limit (PostHog: the Kafka message limit, "maximum event size exceeded"): 413. */
export const eventTooLarge = (index: number, what: string): CaptureFailure =>
  refuse(tooLarge(`maximum event size exceeded: event ${index} ${what}`));

/**
 * Where a capture key comes from, in this product (PostHog's text sends people to its project
 * settings, which hogstream has not): the code and type stay PostHog's, for SDKs that read them.
 */
export const PROJECT_KEY_HINT =
  'The first start of hogstream printed your project API key (phc_…); `npm run cli -- project create --name <name>` makes another.';

export const missingApiKey = (): CaptureFailure =>
  refuse(unauthenticated('missing_api_key', `API key not provided. ${PROJECT_KEY_HINT}`));

/** Why a token fails the shape check; the reason is also the error code, as in Django capture. */
export type TokenShapeProblem = 'empty' | 'not_string' | 'too_long' | 'not_ascii' | 'null_byte';

export const malformedApiKey = (reason: TokenShapeProblem): CaptureFailure =>
  refuse(unauthenticated(reason, `Provided API key is not valid: ${reason}`));

/** A well-formed key that no project owns (decision 2). */
export const invalidApiKey = (): CaptureFailure =>
  refuse(unauthenticated('invalid_api_key', `Project API key invalid. ${PROJECT_KEY_HINT}`));

/** A `phx_` key that is unknown or cannot reach the requested project (decision 2). */
export const invalidPersonalApiKey = (): CaptureFailure =>
  refuse(unauthenticated('invalid_personal_api_key', 'Invalid Personal API key.'));

/** A personal key without a usable `project_id` (decision 2). */
export const invalidProject = (): CaptureFailure =>
  refuse(validation('invalid_project', 'Invalid Project ID.', 'project_id'));

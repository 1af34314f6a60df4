/**
 * The error answers of the capture endpoints, shared by the pure capture modules and the route so that every
 * failure has PostHog's body shape `{type, code, detail, attr}` (api-spec.md "Errors", capture.md §2.1).
 */
export type CaptureFailure = {
  ok: false;
  status: 400 | 401 | 413;
  type: string;
  code: string;
  detail: string;
  attr: string | null;
};

const failure = (status: CaptureFailure['status'], type: string, code: string, detail: string, attr: string | null = null): CaptureFailure => ({
  ok: false,
  status,
  type,
  code,
  detail,
  attr,
});

/** Decision 4: anything malformed is one 400 code; the detail says what. */
export const invalidPayload = (detail: string): CaptureFailure => failure(400, 'validation_error', 'invalid_payload', detail);

/** Django's exact words for "the request carried nothing to read" (capture.md §2.1). */
export const noData = (): CaptureFailure =>
  failure(
    400,
    'validation_error',
    'no_data',
    'No data found. Make sure to use a POST request when sending the payload in the body of the request.',
  );

/** A decompressed payload over the configured cap (capture-rs "maximum event size exceeded"). */
export const payloadTooLarge = (limit: number): CaptureFailure =>
  failure(413, 'validation_error', 'payload_too_large', `maximum event size exceeded: the decoded payload is over ${limit} bytes`);

export const missingApiKey = (): CaptureFailure =>
  failure(401, 'authentication_error', 'missing_api_key', 'API key not provided. You can find your project API key in PostHog project settings.');

/** Why a token fails the shape check; the reason is also the error code, as in Django capture. */
export type TokenShapeProblem = 'empty' | 'not_string' | 'too_long' | 'not_ascii' | 'null_byte';

export const malformedApiKey = (reason: TokenShapeProblem): CaptureFailure =>
  failure(401, 'authentication_error', reason, `Provided API key is not valid: ${reason}`);

/** For the route: a well-formed key that no project owns (decision 2). */
export const invalidApiKey = (): CaptureFailure =>
  failure(401, 'authentication_error', 'invalid_api_key', 'Project API key invalid. You can find your project API key in PostHog project settings.');

/** For the route: a `phx_` key that is unknown or cannot reach the requested project (decision 2). */
export const invalidPersonalApiKey = (): CaptureFailure =>
  failure(401, 'authentication_error', 'invalid_personal_api_key', 'Invalid Personal API key.');

/** For the route: a personal key without a usable `project_id` (decision 2). */
export const invalidProject = (): CaptureFailure =>
  failure(400, 'validation_error', 'invalid_project', 'Invalid Project ID.', 'project_id');

/** The error body to send (everything but `ok` and `status`). */
export const failureBody = (f: CaptureFailure) => ({ type: f.type, code: f.code, detail: f.detail, attr: f.attr });

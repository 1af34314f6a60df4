/** This release (package.json's `version`; CHANGELOG.md says what changed). Kept equal by test/config/version.test.ts. */
export const VERSION = '0.2.0';

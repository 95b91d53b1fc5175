/** Exit codes of every command (contract section 1). */
export const EXIT_OK = 0;
/** Validation, rule-test or check failure. */
export const EXIT_FAILURE = 1;
/** Usage error, or a runtime error at start-up. */
export const EXIT_USAGE = 2;

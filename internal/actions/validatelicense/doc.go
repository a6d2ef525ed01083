// Package validatelicense is the validate-unity-license action
// (cmd/validate-unity-license; reference-behavior.md §1.13,
// unity-lifecycle-facts.md §7): a local check of the Unity secrets' shape
// before a seat is acquired. It reads UNITY_SERIAL, UNITY_EMAIL,
// UNITY_PASSWORD and UNITY_LICENSING_SERVER from the step's environment,
// writes serial-present, email-present and password-present (booleans,
// never a value or a length) before any check, and then applies the pure
// rule internal/unity/validation.CheckLicense.
package validatelicense

// Package semverrange parses semver ranges (skipRanges, olm.package.required
// versionRanges) exactly as OLM does, with blang/semver v4, and refuses the ranges that
// library would silently shorten (it drops every one-character token, so ">=1.0.0 <" means
// ">=1.0.0"). It depends on nothing but blang/semver so that its fuzz test runs at full
// speed: a fuzz binary's cost per input grows with the code it links.
package semverrange

package cli

// Version is set at build time with
// -ldflags "-X lookahead/internal/cli.Version=...". Builds without it say
// "dev".
var Version = "dev"

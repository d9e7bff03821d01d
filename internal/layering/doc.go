// Package layering holds the tests of the module's import layering: which
// packages may depend on which. It has no code of its own.
//
//   - internal/ is the ground floor: no package under it, nor its tests,
//     imports a lookahead package outside internal/. Compositions of the
//     whole system live above: the demo (demo/) and the failover tests
//     (failover/).
//   - The broker (broker/...) does not depend on the agent (agent/...) nor
//     on the demo's composition root (demo/): a broker build carries no
//     agent.
//   - The broker's web view (broker/web) does not carry the configuration
//     loader (internal/config, viper and its file formats): its loopback
//     rule is internal/loopback.
//   - Only the binaries (cmd/...) depend on the CLI helpers (internal/cli):
//     libraries take the version from internal/version.
package layering

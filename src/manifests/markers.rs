//! `// +opgen:rbac:` markers (placeholder until the marker parser lands).

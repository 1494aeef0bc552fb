//! What opgen knows of well-known images, so that an operand made with `create api --image`
//! runs them as published, in the restricted pods opgen scaffolds: a non-root numeric user,
//! a read-only root filesystem, no capabilities.
//!
//! Each user and group ID below was read in the Dockerfile the image is built from (the
//! docker-library repositories, MariaDB/mariadb-docker, percona/percona-docker,
//! valkey-io/valkey-container, nginxinc/docker-nginx and docker-nginx-unprivileged). Where
//! the Dockerfile pins the ID, it cannot change between releases; where it lets the
//! distribution pick one, the comment says what the published image got.

use super::{ImageRef, NonRootId};

/// A well-known image and what it needs to run unprivileged.
#[derive(Debug, PartialEq, Eq)]
pub struct KnownImage {
    /// Its repository on Docker Hub: `mysql` (an official image), `nginxinc/nginx-unprivileged`.
    pub repository: &'static str,
    /// The directory it keeps its data in, where the persistent volume goes; `None` for
    /// images that keep none.
    pub data_dir: Option<&'static str>,
    /// Other directories it writes to (besides `/tmp`, which every operand gets), each of
    /// which needs a volume on a read-only root filesystem.
    pub scratch_dirs: &'static [WritableDir],
    /// Environment variables it needs to start, for the sample object.
    pub sample_env: &'static [SampleEnv],
    /// The user it runs its service as.
    pub user: ServiceUser,
    /// The user of its Alpine variant (tags with `alpine`), where that differs.
    pub alpine_user: Option<ServiceUser>,
    /// The TCP port it listens on as published.
    pub port: u16,
    /// Set for an image that cannot run unprivileged as published.
    pub needs_root: Option<NeedsRoot>,
}

/// A numeric user and its primary group, as an image's Dockerfile creates them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ServiceUser {
    pub name: &'static str,
    pub uid: i64,
    pub gid: i64,
}

/// A directory that must be writable: the volume's name and where it is mounted.
#[derive(Debug, PartialEq, Eq)]
pub struct WritableDir {
    pub volume: &'static str,
    pub path: &'static str,
}

/// An environment variable of a sample object, with the reason it is there (comment lines).
#[derive(Debug, PartialEq, Eq)]
pub struct SampleEnv {
    pub name: &'static str,
    pub value: &'static str,
    pub why: &'static [&'static str],
}

/// Why an image cannot run without privileges, and the image to use instead.
#[derive(Debug, PartialEq, Eq)]
pub struct NeedsRoot {
    pub why: &'static str,
    /// A repository of this table that runs unprivileged.
    pub instead: &'static str,
}

const fn user(name: &'static str, uid: i64, gid: i64) -> ServiceUser {
    ServiceUser { name, uid, gid }
}

const fn dir(volume: &'static str, path: &'static str) -> WritableDir {
    WritableDir { volume, path }
}

/// The sample environment of the MySQL images, which will not start without a root password.
const MYSQL_SAMPLE_ENV: &[SampleEnv] = &[SampleEnv {
    name: "MYSQL_RANDOM_ROOT_PASSWORD",
    value: "yes",
    why: RANDOM_ROOT_PASSWORD,
}];

const RANDOM_ROOT_PASSWORD: &[&str] = &[
    "The image will not start without a root password; this one is generated and printed",
    "to the log. Use `valueFrom.secretKeyRef` to take a password from a Secret instead.",
];

/// The table. Looked up in order; repositories are unique.
pub const KNOWN_IMAGES: &[KnownImage] = &[
    KnownImage {
        repository: "mysql",
        data_dir: Some("/var/lib/mysql"),
        // The server's socket and pid file.
        scratch_dirs: &[dir("run", "/var/run/mysqld")],
        sample_env: MYSQL_SAMPLE_ENV,
        // Pinned: the Oracle Linux Dockerfile (the default variant of every version) runs
        // `groupadd --system --gid 999 mysql` and `useradd --system --uid 999 --gid 999`.
        // The Debian variant of 8.0 let `useradd -r` choose; Debian hands out system IDs
        // from 999 down, so its fresh image got 999 too.
        user: user("mysql", 999, 999),
        alpine_user: None,
        port: 3306,
        needs_root: None,
    },
    KnownImage {
        repository: "percona/percona-server",
        data_dir: Some("/var/lib/mysql"),
        // The socket and pid file, and the log directory the Dockerfile declares a volume.
        scratch_dirs: &[dir("run", "/var/run/mysqld"), dir("log", "/var/log/mysql")],
        sample_env: MYSQL_SAMPLE_ENV,
        // Pinned: `groupadd -g 1001 mysql` and `useradd -u 1001 -r -g 1001`. The
        // Dockerfile's `USER mysql` is a name, which the kubelet cannot check to be
        // non-root, so the pods must name the number.
        user: user("mysql", 1001, 1001),
        alpine_user: None,
        port: 3306,
        needs_root: None,
    },
    KnownImage {
        repository: "mariadb",
        data_dir: Some("/var/lib/mysql"),
        scratch_dirs: &[dir("run", "/run/mysqld")],
        sample_env: &[SampleEnv {
            name: "MARIADB_RANDOM_ROOT_PASSWORD",
            value: "yes",
            why: RANDOM_ROOT_PASSWORD,
        }],
        // Not pinned in the Ubuntu Dockerfile (the default variant): it deletes the base
        // image's `ubuntu` user, then `groupadd -r mysql` and `useradd -r -g mysql` take the
        // first free system IDs, 999. The UBI variant pins `--gid 999` and `--uid 999`,
        // saying it does so to match the Ubuntu image.
        user: user("mysql", 999, 999),
        alpine_user: None,
        port: 3306,
        needs_root: None,
    },
    KnownImage {
        repository: "postgres",
        // PGDATA lies inside: `/var/lib/postgresql/data` up to 17, `/var/lib/postgresql/<major>/docker`
        // from 18, where the entrypoint refuses to start if `/var/lib/postgresql/data` is a
        // mount. A volume mounted at the parent suits both, and keeps the volume's
        // `lost+found` out of PGDATA, which `initdb` wants empty.
        data_dir: Some("/var/lib/postgresql"),
        // The server's sockets and lock files.
        scratch_dirs: &[dir("run", "/var/run/postgresql")],
        sample_env: &[SampleEnv {
            name: "POSTGRES_PASSWORD",
            value: "change-me",
            why: &[
                "The image will not start without a superuser password. Take it from a Secret",
                "with `valueFrom.secretKeyRef` rather than writing it here.",
            ],
        }],
        // Pinned: Debian `groupadd -r postgres --gid=999` and `useradd -r -g postgres
        // --uid=999`; Alpine `addgroup -g 70 -S postgres` and `adduser -u 70 -S -D -G
        // postgres` (70 is the ID Alpine's own postgresql package uses).
        user: user("postgres", 999, 999),
        alpine_user: Some(user("postgres", 70, 70)),
        port: 5432,
        needs_root: None,
    },
    KnownImage {
        repository: "mongo",
        data_dir: Some("/data/db"),
        // The config server's data, a second volume of the image.
        scratch_dirs: &[dir("configdb", "/data/configdb")],
        sample_env: &[],
        // Pinned: `groupadd --gid 999 --system mongodb` and `useradd --uid 999 --system
        // --gid mongodb`. There is no Alpine variant.
        user: user("mongodb", 999, 999),
        alpine_user: None,
        port: 27017,
        needs_root: None,
    },
    KnownImage {
        repository: "redis",
        data_dir: Some("/data"),
        scratch_dirs: &[],
        sample_env: &[],
        // Pinned: Debian `groupadd -r -g 999 redis` and `useradd -r -g redis -u 999`;
        // Alpine `addgroup -S -g 1000 redis` and `adduser -S -G redis -u 999`, so its group
        // is 1000.
        user: user("redis", 999, 999),
        alpine_user: Some(user("redis", 999, 1000)),
        port: 6379,
        needs_root: None,
    },
    KnownImage {
        repository: "valkey/valkey",
        data_dir: Some("/data"),
        scratch_dirs: &[],
        sample_env: &[],
        // Pinned, as in the redis image it derives from: Debian `groupadd -r -g 999 valkey`
        // and `useradd -r -g valkey -u 999`; Alpine `addgroup -S -g 1000 valkey` and
        // `adduser -S -G valkey -u 999`.
        user: user("valkey", 999, 999),
        alpine_user: Some(user("valkey", 999, 1000)),
        port: 6379,
        needs_root: None,
    },
    KnownImage {
        repository: "memcached",
        data_dir: None,
        scratch_dirs: &[],
        sample_env: &[],
        // Pinned: Debian `groupadd --system --gid 11211 memcache` and `useradd --system
        // --gid memcache --uid 11211`; Alpine `addgroup -g 11211` and `adduser -D -u 11211`.
        // Both end with `USER memcache`, a name the kubelet cannot check to be non-root, so
        // the pods must name the number.
        user: user("memcache", 11211, 11211),
        alpine_user: None,
        port: 11211,
        needs_root: None,
    },
    KnownImage {
        repository: "nginx",
        data_dir: None,
        // Its cache, and the pid file in /var/run.
        scratch_dirs: &[dir("cache", "/var/cache/nginx"), dir("run", "/var/run")],
        sample_env: &[],
        // Pinned: Debian `groupadd --system --gid 101 nginx` and `useradd --system --gid
        // nginx --uid 101`; Alpine `addgroup -g 101 -S nginx` and `adduser -S -D -H -u 101`.
        // The image starts as root all the same: the master process binds port 80 and only
        // the workers run as `nginx`.
        user: user("nginx", 101, 101),
        alpine_user: None,
        port: 80,
        needs_root: Some(NeedsRoot {
            why: "it starts as root to bind port 80, and the pods run without root or capabilities",
            instead: "nginxinc/nginx-unprivileged",
        }),
    },
    KnownImage {
        repository: "nginxinc/nginx-unprivileged",
        data_dir: None,
        // It moves its pid file and temporary files to /tmp, and owns its cache.
        scratch_dirs: &[dir("cache", "/var/cache/nginx")],
        sample_env: &[],
        // Pinned by build arguments, `ARG UID=101` and `ARG GID=101`, that create the
        // `nginx` group and user; the Dockerfile ends with a numeric `USER $UID`.
        user: user("nginx", 101, 101),
        alpine_user: None,
        port: 8080,
        needs_root: None,
    },
];

impl KnownImage {
    /// The entry of `image`: the image itself from Docker Hub, or a mirror of it that keeps
    /// Docker Hub's path (`mirror.gcr.io/library/mysql`, `public.ecr.aws/docker/library/mysql`,
    /// `ghcr.io/nginxinc/nginx-unprivileged`). Other images of the same name, such as
    /// `bitnami/mysql`, run as other users and are not taken for these.
    pub fn find(image: &ImageRef) -> Option<&'static KnownImage> {
        KNOWN_IMAGES.iter().find(|known| known.is(image))
    }

    /// The entry of a repository of the table.
    pub fn by_repository(repository: &str) -> Option<&'static KnownImage> {
        KNOWN_IMAGES.iter().find(|k| k.repository == repository)
    }

    fn is(&self, image: &ImageRef) -> bool {
        if let Some(repository) = image.docker_hub_repository() {
            return repository == self.repository;
        }
        let hub_path = if self.repository.contains('/') {
            self.repository.to_owned()
        } else {
            format!("library/{}", self.repository)
        };
        let path = image.path();
        path == hub_path || path.ends_with(&format!("/{hub_path}"))
    }

    /// The user `image` (one of this entry's tags) runs as.
    pub fn user_of(&self, image: &ImageRef) -> ServiceUser {
        let alpine = image.tag().is_some_and(|tag| tag.contains("alpine"));
        match self.alpine_user {
            Some(alpine_user) if alpine => alpine_user,
            _ => self.user,
        }
    }
}

impl ServiceUser {
    pub fn uid(&self) -> NonRootId {
        NonRootId::try_from(self.uid).expect("the table's users are not root (tested)")
    }

    pub fn gid(&self) -> NonRootId {
        NonRootId::try_from(self.gid).expect("the table's groups are not root (tested)")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn find(image: &str) -> Option<&'static str> {
        KnownImage::find(&image.parse().unwrap()).map(|k| k.repository)
    }

    #[test]
    fn finds_docker_hub_images_and_their_mirrors() {
        for (image, repository) in [
            ("mysql", "mysql"),
            ("mysql:8.0", "mysql"),
            ("library/mysql:8.4", "mysql"),
            ("docker.io/library/mysql:8.0", "mysql"),
            ("mirror.gcr.io/library/mysql:8.0", "mysql"),
            ("public.ecr.aws/docker/library/postgres:17", "postgres"),
            (
                "nginxinc/nginx-unprivileged:1.27",
                "nginxinc/nginx-unprivileged",
            ),
            (
                "ghcr.io/nginxinc/nginx-unprivileged:1.27",
                "nginxinc/nginx-unprivileged",
            ),
            ("nginx:1.27-alpine", "nginx"),
            ("memcached:1.6", "memcached"),
            ("percona/percona-server:8.4", "percona/percona-server"),
            ("valkey/valkey:8", "valkey/valkey"),
        ] {
            assert_eq!(find(image), Some(repository), "{image}");
        }
    }

    #[test]
    fn does_not_take_other_images_of_the_same_name_for_known_ones() {
        for image in [
            "bitnami/mysql:8.0",
            "registry.example.com/mysql:8.0",
            "ghcr.io/org/postgres:17",
            "example.com/nginx-unprivileged:1",
            "my-app:v1",
        ] {
            assert_eq!(find(image), None, "{image}");
        }
    }

    #[test]
    fn the_alpine_variant_has_its_own_user_where_it_differs() {
        let uid_gid = |image: &str| {
            let image: ImageRef = image.parse().unwrap();
            let user = KnownImage::find(&image).unwrap().user_of(&image);
            (user.uid, user.gid)
        };
        assert_eq!(uid_gid("postgres:17"), (999, 999));
        assert_eq!(uid_gid("postgres:17-alpine"), (70, 70));
        assert_eq!(uid_gid("redis:7.4"), (999, 999));
        assert_eq!(uid_gid("redis:7.4-alpine3.20"), (999, 1000));
        assert_eq!(uid_gid("memcached:1.6-alpine"), (11211, 11211));
        assert_eq!(uid_gid("mysql:8.0"), (999, 999));
    }

    #[test]
    fn every_entry_is_usable_in_a_restricted_pod() {
        let mut repositories: Vec<&str> = KNOWN_IMAGES.iter().map(|k| k.repository).collect();
        repositories.sort_unstable();
        repositories.dedup();
        assert_eq!(
            repositories.len(),
            KNOWN_IMAGES.len(),
            "repositories repeat"
        );
        for known in KNOWN_IMAGES {
            let name = known.repository;
            for user in [Some(known.user), known.alpine_user].into_iter().flatten() {
                assert!(NonRootId::try_from(user.uid).is_ok(), "{name}: uid");
                assert!(NonRootId::try_from(user.gid).is_ok(), "{name}: gid");
            }
            // Paths become Rust string literals and volume names (DNS labels).
            let mut volumes = vec!["tmp", "data"];
            for dir in known.scratch_dirs {
                assert!(dir.path.starts_with('/') && !dir.path.contains(['"', '\\']));
                assert!(
                    dir.volume
                        .chars()
                        .all(|c| c.is_ascii_lowercase() || c == '-'),
                    "{name}: {}",
                    dir.volume
                );
                volumes.push(dir.volume);
            }
            let count = volumes.len();
            volumes.sort_unstable();
            volumes.dedup();
            assert_eq!(volumes.len(), count, "{name}: volume names repeat");
            // Sample values are written in double quotes.
            for env in known.sample_env {
                assert!(!env.value.contains(['"', '\\']), "{name}: {}", env.name);
            }
            if let Some(needs_root) = &known.needs_root {
                let instead = KnownImage::by_repository(needs_root.instead).unwrap_or_else(|| {
                    panic!("{name}: {} is not in the table", needs_root.instead)
                });
                assert!(instead.needs_root.is_none() && instead.port >= 1024);
            }
        }
    }

    /// The row of docs/create-api.md's table for `known`.
    fn doc_row(known: &KnownImage) -> String {
        let code = |items: &mut dyn Iterator<Item = &str>| {
            items
                .map(|item| format!("`{item}`"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let alpine = known
            .alpine_user
            .map_or(String::new(), |u| format!(" (Alpine: {}:{})", u.uid, u.gid));
        let cells = [
            format!("`{}`", known.repository),
            format!(
                "`{}` {}:{}{alpine}",
                known.user.name, known.user.uid, known.user.gid
            ),
            code(&mut known.data_dir.into_iter()),
            code(&mut known.scratch_dirs.iter().map(|d| d.path)),
            known.port.to_string(),
            code(&mut known.sample_env.iter().map(|e| e.name)),
        ];
        let cells: Vec<String> = cells
            .into_iter()
            .map(|cell| {
                if cell.is_empty() {
                    " ".to_owned()
                } else {
                    format!(" {cell} ")
                }
            })
            .collect();
        format!("|{}|", cells.join("|"))
    }

    #[test]
    fn the_docs_list_every_known_image_as_the_table_has_it() {
        let doc = include_str!("../../docs/create-api.md");
        for known in KNOWN_IMAGES {
            let row = doc_row(known);
            assert!(
                doc.lines().any(|line| line == row),
                "docs/create-api.md lacks the row\n{row}"
            );
        }
    }

    #[test]
    fn images_whose_user_is_a_name_get_its_number() {
        // The kubelet refuses `runAsNonRoot` pods whose image names its user (`USER
        // memcache`): only a number can be checked.
        let memcached = KnownImage::by_repository("memcached").unwrap();
        assert_eq!((memcached.user.uid, memcached.user.gid), (11211, 11211));
        let percona = KnownImage::by_repository("percona/percona-server").unwrap();
        assert_eq!(percona.user.uid, 1001);
    }
}

//! The lines appended to a file since the last look: how `opgen dev` follows the manager's
//! log and the API server's audit log without a thread per file.

use std::{
    fs::File,
    io::{Read as _, Seek as _, SeekFrom},
    path::{Path, PathBuf},
};

pub struct Tail {
    path: PathBuf,
    offset: u64,
    /// The start of a line whose end is not written yet.
    partial: Vec<u8>,
}

impl Tail {
    /// Follows `path` from its current end (or its start, if it does not exist yet).
    pub fn from_end(path: &Path) -> Self {
        let offset = std::fs::metadata(path).map_or(0, |meta| meta.len());
        Self {
            path: path.to_owned(),
            offset,
            partial: Vec::new(),
        }
    }

    /// The whole lines written since the last call.
    pub fn new_lines(&mut self) -> Vec<String> {
        let Ok(mut file) = File::open(&self.path) else {
            return Vec::new();
        };
        let len = file.metadata().map_or(0, |meta| meta.len());
        if len < self.offset {
            // Truncated or replaced: start over.
            self.offset = 0;
            self.partial.clear();
        }
        let mut bytes = Vec::new();
        if file.seek(SeekFrom::Start(self.offset)).is_err() || file.read_to_end(&mut bytes).is_err()
        {
            return Vec::new();
        }
        self.offset += bytes.len() as u64;
        self.partial.extend_from_slice(&bytes);
        let Some(last_newline) = self.partial.iter().rposition(|&b| b == b'\n') else {
            return Vec::new();
        };
        let rest = self.partial.split_off(last_newline + 1);
        let complete = std::mem::replace(&mut self.partial, rest);
        String::from_utf8_lossy(&complete)
            .lines()
            .map(str::to_owned)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write as _;

    #[test]
    fn returns_whole_lines_once() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("log");
        std::fs::write(&path, "old\n").unwrap();
        let mut tail = Tail::from_end(&path);
        assert!(tail.new_lines().is_empty());
        let mut file = File::options().append(true).open(&path).unwrap();
        write!(file, "one\ntw").unwrap();
        assert_eq!(tail.new_lines(), ["one"]);
        file.write_all(b"o\n").unwrap();
        assert_eq!(tail.new_lines(), ["two"]);
        assert!(tail.new_lines().is_empty());
    }

    #[test]
    fn a_missing_file_is_followed_from_its_start() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("later");
        let mut tail = Tail::from_end(&path);
        assert!(tail.new_lines().is_empty());
        std::fs::write(&path, "first\n").unwrap();
        assert_eq!(tail.new_lines(), ["first"]);
    }
}

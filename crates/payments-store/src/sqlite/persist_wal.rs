//! The one SQLite setting rusqlite has no safe call for: keeping the WAL when the last
//! connection closes. It goes through SQLite's C interface (`sqlite3_file_control`), which is
//! why this module allows `unsafe` code.
#![allow(unsafe_code)]

/// Keeps the WAL and its index (the `-wal` and `-shm` files) beside the database when the
/// writer, the last connection, closes, instead of removing them. Opening a WAL database makes
/// the index first if it is not there, and the index needs room on the disk: after a clean stop
/// on a disk that then filled up, the sandbox could not start at all. Kept, they take no new
/// room at the next start, which then serves reads on a full disk (and writes once there is
/// room). The WAL is reset at each checkpoint, so it takes no more than it would while serving.
pub(super) fn persist_wal(connection: &rusqlite::Connection) -> Result<(), crate::OpenError> {
    let mut on: std::ffi::c_int = 1;
    // SAFETY: the handle is this open connection's, and SQLITE_FCNTL_PERSIST_WAL reads and
    // writes the one int it is given, which lives until the call returns.
    let code = unsafe {
        rusqlite::ffi::sqlite3_file_control(
            connection.handle(),
            c"main".as_ptr(),
            rusqlite::ffi::SQLITE_FCNTL_PERSIST_WAL,
            (&raw mut on).cast(),
        )
    };
    match code {
        rusqlite::ffi::SQLITE_OK => Ok(()),
        code => Err(crate::OpenError::failed("cannot keep the WAL", rusqlite::ffi::Error::new(code))),
    }
}

//! A query's rows over the host's flat layout (one byte buffer, two `u32`s per value), read
//! without copying and without any way to read out of bounds: the layout is checked once, when
//! the host's answer arrives.

use super::{Column, SqlError};

/// A cell's length meaning SQL `NULL`.
const NULL: u32 = u32::MAX;

/// Rows of one query, in one flat buffer: read them with [`RowSet::rows`].
///
/// Every value is UTF-8 text in one form per [`ValueKind`](super::ValueKind), except
/// [`ValueKind::Bytes`](super::ValueKind::Bytes) (raw bytes); `None` is SQL `NULL`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RowSet {
    columns: Vec<Column>,
    data: Vec<u8>,
    /// Two `u32`s per value, row by row: offset and length into `data`.
    cells: Vec<u32>,
    rows: usize,
}

impl RowSet {
    /// Checks the host's layout once, so that reading never fails later.
    #[cfg_attr(not(target_arch = "wasm32"), allow(dead_code, reason = "the fake builds row sets directly"))]
    pub(crate) fn from_parts(columns: Vec<Column>, data: Vec<u8>, cells: Vec<u32>, row_count: u32) -> Result<RowSet, SqlError> {
        let malformed = |why: String| SqlError::QueryFailed { code: "turnpike".into(), message: format!("the host returned a malformed row set: {why}") };
        let rows = row_count as usize;
        let expected = rows.checked_mul(columns.len()).and_then(|n| n.checked_mul(2));
        if expected != Some(cells.len()) {
            return Err(malformed(format!("{} cells for {rows} rows of {} columns", cells.len(), columns.len())));
        }
        for span in cells.chunks_exact(2) {
            let (offset, length) = (span[0] as usize, span[1]);
            if length != NULL && offset.checked_add(length as usize).is_none_or(|end| end > data.len()) {
                return Err(malformed(format!("a value at {offset}+{length} lies outside the {} data bytes", data.len())));
            }
        }
        Ok(RowSet { columns, data, cells, rows })
    }

    /// Starts a row set for a test (see [`RowSetBuilder`]).
    pub fn builder(columns: impl IntoIterator<Item = Column>) -> RowSetBuilder {
        RowSetBuilder { set: RowSet { columns: columns.into_iter().collect(), data: Vec::new(), cells: Vec::new(), rows: 0 } }
    }

    /// The result's columns, in order.
    pub fn columns(&self) -> &[Column] {
        &self.columns
    }

    /// The index of the column named `name` (exactly), if there is one.
    pub fn column_index(&self, name: &str) -> Option<usize> {
        self.columns.iter().position(|c| c.name == name)
    }

    /// How many rows there are.
    pub fn len(&self) -> usize {
        self.rows
    }

    /// Whether there is no row.
    pub fn is_empty(&self) -> bool {
        self.rows == 0
    }

    /// Row `index`, if there is one.
    pub fn row(&self, index: usize) -> Option<Row<'_>> {
        (index < self.rows).then_some(Row { set: self, index })
    }

    /// The rows, in order.
    pub fn rows(&self) -> Rows<'_> {
        Rows { set: self, next: 0 }
    }

    /// Keeps only the first `rows` rows (what the host does for a lower cap).
    #[cfg_attr(target_arch = "wasm32", allow(dead_code, reason = "only the fake caps row sets"))]
    pub(crate) fn truncate(&mut self, rows: usize) {
        if rows < self.rows {
            self.rows = rows;
            self.cells.truncate(rows * self.columns.len() * 2);
        }
    }

    fn cell(&self, row: usize, column: usize) -> Option<&[u8]> {
        if column >= self.columns.len() {
            return None;
        }
        let at = (row * self.columns.len() + column) * 2;
        let (offset, length) = (*self.cells.get(at)? as usize, *self.cells.get(at + 1)?);
        if length == NULL {
            return None;
        }
        self.data.get(offset..offset.checked_add(length as usize)?)
    }
}

/// One row of a [`RowSet`].
#[derive(Debug, Clone, Copy)]
pub struct Row<'a> {
    set: &'a RowSet,
    index: usize,
}

impl<'a> Row<'a> {
    /// The row's index in its set.
    pub fn index(&self) -> usize {
        self.index
    }

    /// The value of column `column` as bytes; `None` for SQL `NULL` (or no such column).
    pub fn get(&self, column: usize) -> Option<&'a [u8]> {
        self.set.cell(self.index, column)
    }

    /// The value of column `column` as text; `None` for SQL `NULL`, no such column, or a
    /// value that is not UTF-8 (only [`ValueKind::Bytes`](super::ValueKind::Bytes) can be:
    /// read those with [`Row::get`]).
    pub fn text(&self, column: usize) -> Option<&'a str> {
        self.get(column).and_then(|b| std::str::from_utf8(b).ok())
    }

    /// Whether column `column` is SQL `NULL`.
    pub fn is_null(&self, column: usize) -> bool {
        self.get(column).is_none()
    }
}

/// The rows of a [`RowSet`], in order.
#[derive(Debug, Clone)]
pub struct Rows<'a> {
    set: &'a RowSet,
    next: usize,
}

impl<'a> Iterator for Rows<'a> {
    type Item = Row<'a>;

    fn next(&mut self) -> Option<Row<'a>> {
        let row = self.set.row(self.next)?;
        self.next += 1;
        Some(row)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = self.set.rows.saturating_sub(self.next);
        (left, Some(left))
    }
}

impl ExactSizeIterator for Rows<'_> {}

/// Builds a [`RowSet`] for a test: `RowSet::builder(columns).row([Some("1"), None]).build()`.
/// Values are given in their text form (see [`ValueKind`](super::ValueKind)); `None` is SQL `NULL`.
#[derive(Debug, Clone)]
pub struct RowSetBuilder {
    set: RowSet,
}

impl RowSetBuilder {
    /// Adds a row. Panics when it does not have one value per column (a broken test).
    /// A row of only `NULL`s needs its type spelled: `[None::<&str>, None]`.
    pub fn row<V: AsRef<[u8]>>(mut self, values: impl IntoIterator<Item = Option<V>>) -> Self {
        let before = self.set.cells.len();
        for value in values {
            match value {
                Some(v) => {
                    let v = v.as_ref();
                    self.set.cells.push(self.set.data.len() as u32);
                    self.set.cells.push(v.len() as u32);
                    self.set.data.extend_from_slice(v);
                }
                None => self.set.cells.extend([0, NULL]),
            }
        }
        let given = (self.set.cells.len() - before) / 2;
        assert_eq!(given, self.set.columns.len(), "row {} has {given} values for {} columns", self.set.rows, self.set.columns.len());
        self.set.rows += 1;
        self
    }

    /// The row set.
    pub fn build(self) -> RowSet {
        self.set
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sql::ValueKind;

    fn columns() -> Vec<Column> {
        vec![Column::new("id", ValueKind::Integer, "int8"), Column::new("note", ValueKind::Text, "text")]
    }

    #[test]
    fn rows_read_values_and_nulls() {
        let set = RowSet::builder(columns()).row([Some("1"), None]).row([Some("2"), Some("hé")]).build();
        assert_eq!(set.len(), 2);
        let rows: Vec<Row<'_>> = set.rows().collect();
        assert_eq!((rows[0].text(0), rows[0].text(1), rows[0].is_null(1)), (Some("1"), None, true));
        assert_eq!(rows[1].get(1), Some("hé".as_bytes()));
        assert_eq!(rows[1].text(2), None, "no such column");
        assert_eq!(set.rows().len(), 2);
        assert!(set.row(2).is_none());
        assert_eq!(set.column_index("note"), Some(1));
    }

    #[test]
    fn a_malformed_layout_is_refused_once_not_read() {
        let cols = columns();
        assert!(RowSet::from_parts(cols.clone(), b"12".to_vec(), vec![0, 1, 1, 1], 1).is_ok());
        assert!(RowSet::from_parts(cols.clone(), b"12".to_vec(), vec![0, 1], 1).is_err(), "too few cells");
        assert!(RowSet::from_parts(cols.clone(), b"12".to_vec(), vec![0, 1, 1, 2], 1).is_err(), "span past the data");
        assert!(RowSet::from_parts(cols, b"12".to_vec(), vec![0, 1, 9, NULL], 1).is_ok(), "a NULL's offset is not read");
    }

    #[test]
    fn truncate_keeps_the_first_rows() {
        let mut set = RowSet::builder(columns()).row([Some("1"), None]).row([Some("2"), None]).build();
        set.truncate(1);
        assert_eq!(set.len(), 1);
        assert_eq!(set.row(0).and_then(|r| r.text(0)), Some("1"));
    }
}

//! A run's row of summary cells, compact: a sweep holds every run's row
//! until its tables are written, and a row of `String`s (115 cells for a
//! one-service model) took 5.6 KB a run: about 5.6 GB at the million runs
//! a sweep may have. One text and each cell's end take the cells'
//! bytes and 4 more a cell.

use std::fmt;
use std::ops::Index;

/// Cells of text, in order.
#[derive(Clone, PartialEq, Eq, Default)]
pub struct Row {
    /// Every cell, one after the other.
    text: Box<str>,
    /// Where each cell ends in `text`.
    ends: Box<[u32]>,
}

impl Row {
    /// The row of `cells`.
    ///
    /// # Panics
    /// If the cells hold 4 GiB of text or more.
    pub fn new<S: AsRef<str>>(cells: impl IntoIterator<Item = S>) -> Row {
        let mut text = String::new();
        let mut ends = Vec::new();
        for cell in cells {
            text.push_str(cell.as_ref());
            ends.push(u32::try_from(text.len()).expect("a row's cells hold under 4 GiB of text"));
        }
        Row {
            text: text.into_boxed_str(),
            ends: ends.into_boxed_slice(),
        }
    }

    /// How many cells.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// Whether it has no cell.
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// Cell `i`, if there is one.
    pub fn get(&self, i: usize) -> Option<&str> {
        let end = *self.ends.get(i)? as usize;
        let start = if i == 0 { 0 } else { self.ends[i - 1] as usize };
        Some(&self.text[start..end])
    }

    /// Every cell, in order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = &str> + '_ {
        (0..self.len()).map(|i| &self[i])
    }
}

impl Index<usize> for Row {
    type Output = str;

    fn index(&self, i: usize) -> &str {
        self.get(i)
            .unwrap_or_else(|| panic!("cell {i} of a row of {}", self.len()))
    }
}

impl fmt::Debug for Row {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl<S: AsRef<str>> FromIterator<S> for Row {
    fn from_iter<I: IntoIterator<Item = S>>(cells: I) -> Row {
        Row::new(cells)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_come_back_as_they_went_in() {
        let cells = ["", "a", "", "ünïcode, with a comma", "42", ""];
        let row = Row::new(cells);
        assert_eq!(row.len(), cells.len());
        assert_eq!(row.iter().collect::<Vec<_>>(), cells);
        assert_eq!(row.get(6), None);
        assert_eq!(&row[3], "ünïcode, with a comma");
        assert!(Row::new(Vec::<String>::new()).is_empty());
        assert_eq!(format!("{row:?}"), format!("{cells:?}"));
    }

    /// The point of the type: a one-service model's row, 115 cells of a
    /// few characters, fits in well under a kilobyte of heap.
    #[test]
    fn a_row_holds_its_bytes_and_four_a_cell() {
        let cells: Vec<String> = (0..115).map(|i| format!("{}", i * 37)).collect();
        let row = Row::new(&cells);
        let text: usize = cells.iter().map(String::len).sum();
        assert_eq!(row.text.len() + 4 * row.ends.len(), text + 4 * 115);
        assert!(text + 4 * 115 < 1024);
    }
}

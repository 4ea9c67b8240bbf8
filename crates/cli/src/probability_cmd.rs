//! `stormsim probability`: P(storm) per variant, by plain Monte Carlo with
//! Wilson's interval, or by multilevel splitting for storms too rare for it
//! ([`stormsim_sweep::probability`]).

use stormsim_sweep::probability::{probability_csv, sentence, StormProbability};

/// Prints each variant's sentence, or (`csv`) the table.
pub fn report(rows: &[(String, StormProbability)], csv: bool) -> anyhow::Result<()> {
    if csv {
        print!("{}", probability_csv(rows)?);
    } else {
        for (name, p) in rows {
            println!("{}", sentence(name, p));
        }
    }
    Ok(())
}

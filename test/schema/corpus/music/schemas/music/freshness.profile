rank-profile freshness inherits rank_albums {
    second-phase {
        expression: attribute(year) * 0.1
    }
}

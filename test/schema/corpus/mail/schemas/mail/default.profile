rank-profile default {
    first-phase {
        expression: nativeRank(subject) + attribute(priority)
    }
}

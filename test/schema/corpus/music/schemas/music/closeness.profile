rank-profile closeness {
    inputs {
        query(q) tensor<float>(x[4])
    }
    first-phase {
        expression: closeness(field, embedding)
    }
}

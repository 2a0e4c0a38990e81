return {
}

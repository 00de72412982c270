/// The login form shown on a non-loopback address before anything else.
enum LoginPage {
    static func render(problem: String? = nil) -> String {
        var html = PageLayout.head(title: "workoutd — log in", script: false)
        html += #"<main class="login"><h1>workoutd</h1>"#
        if let problem { html += #"<p class="notice bad" id="login-problem">\#(HTMLText.escaped(problem))</p>"# }
        html += #"""
            <form method="post" action="/login"><label>Token <input type="password" name="token" id="token" autocomplete="current-password" required autofocus></label>
            <button type="submit" id="login">Log in</button></form>
            <p class="meta">The token is in the file the credential <code>web.token_credential</code> names (LoadCredential=), or in <code>web.token_file</code>.</p></main>
            """#
        return html + PageLayout.tail
    }
}
